package quorum

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/goredisbackend"
	"github.com/lockgen/lockgen/internal/runtimelink"
	"github.com/lockgen/lockgen/lua"
	"github.com/lockgen/lockgen/runtime"
	"github.com/redis/go-redis/v9"
)

// A quorum Locker takes each lock on N independent Redis deployments
// (RedLock). Its backend, quorumBackend, stands for the N of them: it sends
// every script call to all N in parallel and combines their replies, so
// the Locker's acquire, wait, renew, release and clean-up logic runs
// unchanged on top of it.
//
//   - acquire: granted when a majority granted within the lease (less the
//     drift margin), counted from before the call was sent. The highest of
//     their fences is the lock's fence, and it is written back to them as
//     their fence floor (mutex_floor); a majority must confirm that too.
//     Otherwise every partial grant is given back at once.
//   - renew: mutex_floor on all N (which also keeps the floor); 1 if a
//     majority confirmed, 0 if that can no longer be, else an error (the
//     watchdog tries again until the local deadline).
//   - release: on all N; 1 if a majority released it.
//   - wake-ups: the channel is subscribed on every server (a majority must
//     confirm); any message wakes the waiters, and a hand-over message
//     ("grant:"), which speaks for one server only, becomes "all".
//
// Fences rise across holders: a later majority shares at least one server
// with the earlier one, whose next grant takes a fence above the floor.

// ErrNoQuorum: fewer than a majority of a quorum Locker's servers answered
// a call in time: the lock was not acquired, or a release is retried in
// the background.
var ErrNoQuorum = errors.New("lockgen: no majority of the quorum's servers answered")

// New returns a Locker that takes each lock on the independent Redis
// deployments behind clients (RedLock): granted when a majority grants it,
// so losing a minority of them neither blocks the locks nor loses them.
// Each client may be a single node, a Sentinel failover client or a
// Cluster client; there must be at least 3 (an odd number tolerates the
// most failures per server). Only the Mutex kind is supported; other kinds
// fail with runtime.ErrInvalidLock, and so does runtime.WithReplicas. The
// Locker does not close the clients. The package documentation says what
// the quorum does and does not guarantee.
func New(clients []redis.UniversalClient, opts ...runtime.Option) (*runtime.Locker, error) {
	backends := make([]backend.Backend, len(clients))
	for i, c := range clients {
		if c == nil {
			return nil, fmt.Errorf("%w: quorum client %d is nil", runtime.ErrInvalidLock, i)
		}
		backends[i] = goredisbackend.New(c)
	}
	return NewWithBackends(backends, opts...)
}

// NewWithBackends is New over any Backends, one per independent
// deployment (package embedded has an in-process one). Close closes them.
func NewWithBackends(backends []backend.Backend, opts ...runtime.Option) (*runtime.Locker, error) {
	if len(backends) < 3 {
		return nil, fmt.Errorf("%w: a quorum needs at least 3 independent servers, got %d", runtime.ErrInvalidLock, len(backends))
	}
	for i, b := range backends {
		if b == nil {
			return nil, fmt.Errorf("%w: quorum backend %d is nil", runtime.ErrInvalidLock, i)
		}
	}
	l := runtime.NewWithBackend(newQuorumBackend(backends), opts...)
	// The Locker knows it runs on a quorum from Caps.Quorum, and refuses
	// the options a quorum cannot honour; this says so at once.
	if err := runtimelink.QuorumRefusal(l); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// quorumBackend is the Backend of a quorum Locker.
type quorumBackend struct {
	members  []*quorumMember
	majority int

	mu    sync.Mutex
	held  map[slotKey]int64 // locks granted by a majority and not released: their fence
	stop  chan struct{}     // closed by Close: follow-ups end
	tasks sync.WaitGroup    // follow-ups in flight
	once  sync.Once
}

func newQuorumBackend(backends []backend.Backend) *quorumBackend {
	q := &quorumBackend{majority: len(backends)/2 + 1, held: map[slotKey]int64{}, stop: make(chan struct{})}
	for i, b := range backends {
		q.members = append(q.members, &quorumMember{index: i, b: b, pub: b.PublishCommand(), flights: map[slotKey]*flight{}})
	}
	return q
}

var _ backend.Backend = (*quorumBackend)(nil)

// Caps: a quorum call returns when its context ends, whatever its servers
// do (the calls still running go on in the background). It takes no boxed
// values: each member gets a Call of its own, with the ARGV it needs.
func (q *quorumBackend) Caps() backend.Caps {
	return backend.Caps{HonorsDeadline: true, Quorum: true}
}

// Eval runs one mutex script call on the quorum.
func (q *quorumBackend) Eval(ctx context.Context, c backend.Call) (any, error) {
	if len(c.Keys) == 0 || len(c.Args) < 3 {
		return nil, fmt.Errorf("lockgen: quorum: malformed call of %s", c.Script.Name)
	}
	switch c.Script {
	case lua.MutexAcquire:
		return q.acquire(ctx, c)
	case lua.MutexRenew:
		return q.renewOne(ctx, c)
	case lua.MutexRelease:
		return q.release(ctx, c)
	}
	return nil, fmt.Errorf("%w: script %s is not supported on a quorum Locker", runtime.ErrInvalidLock, c.Script.Name)
}

// EvalBatch runs the watchdog's renewals: one batch per server, in
// parallel. Only renewals come in batches (a quorum Locker has no fair
// waiters to heartbeat).
func (q *quorumBackend) EvalBatch(ctx context.Context, calls []backend.Call) []backend.Reply {
	out := make([]backend.Reply, len(calls))
	var renewals []backend.Call
	var at []int
	for i, c := range calls {
		if c.Script != lua.MutexRenew || len(c.Keys) == 0 || len(c.Args) < 3 {
			out[i] = backend.Reply{Err: fmt.Errorf("%w: script %s is not supported on a quorum Locker", runtime.ErrInvalidLock, c.Script.Name)}
			continue
		}
		renewals = append(renewals, c)
		at = append(at, i)
	}
	if len(renewals) > 0 {
		for j, r := range q.renew(ctx, renewals) {
			out[at[j]] = r
		}
	}
	return out
}

// EvalWait is not supported: the Locker refuses WithReplicas on a quorum.
func (q *quorumBackend) EvalWait(ctx context.Context, c backend.Call, replicas int, timeout time.Duration) (any, int, error) {
	return nil, 0, fmt.Errorf("%w: WithReplicas is not supported on a quorum Locker", runtime.ErrInvalidLock)
}

// PublishCommand is what the Locker puts in ARGV[3]; each server's call
// gets its own backend's command instead (a Cluster among the servers
// publishes with SPUBLISH).
func (q *quorumBackend) PublishCommand() string { return "PUBLISH" }

// Close ends the follow-ups and closes every server's backend, in
// parallel. It waits for each at most closeWait: a call to a frozen server
// returns only at the client's own timeout, and closing a Pub/Sub
// connection to one can take as long; those finish in the background.
func (q *quorumBackend) Close() error {
	var err error
	q.once.Do(func() {
		q.mu.Lock()
		close(q.stop)
		q.mu.Unlock()
		deadline := time.Now().Add(closeWait)
		waitUntil(deadline, q.tasks.Wait)
		errs := make([]error, len(q.members))
		var closing sync.WaitGroup
		for i, m := range q.members {
			closing.Add(1)
			go func() {
				defer closing.Done()
				errs[i] = m.b.Close()
			}()
		}
		if waitUntil(deadline.Add(closeWait), closing.Wait) {
			err = errors.Join(errs...)
		}
	})
	return err
}

// waitUntil runs wait and returns true once it returns, or false at
// deadline (wait then goes on in the background).
func waitUntil(deadline time.Time, wait func()) bool {
	done := make(chan struct{})
	go func() {
		wait()
		close(done)
	}()
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

// closeWait bounds how long Close waits for follow-ups.
const closeWait = time.Second

// holds reports whether a majority granted holder the lock k and it has
// not been released since.
func (q *quorumBackend) holds(k slotKey) (fence int64, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	fence, ok = q.held[k]
	return fence, ok
}

func (q *quorumBackend) setHeld(k slotKey, fence int64) {
	q.mu.Lock()
	q.held[k] = fence
	q.mu.Unlock()
}

func (q *quorumBackend) dropHeld(k slotKey) {
	q.mu.Lock()
	delete(q.held, k)
	q.mu.Unlock()
}

// noQuorum is the error of a call that fewer than a majority answered.
func (q *quorumBackend) noQuorum(op string, answers []memberAnswer) error {
	errs := []error{fmt.Errorf("%w: %s: %d of %d servers answered, %d needed", ErrNoQuorum, op, countAnswered(answers), len(q.members), q.majority)}
	for i, a := range answers {
		if err := a.err(); err != nil {
			errs = append(errs, fmt.Errorf("server %d: %w", i+1, err))
		}
	}
	return errors.Join(errs...)
}
