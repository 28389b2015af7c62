package runtime_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/lockgen/lockgen/redistest"
	"github.com/lockgen/lockgen/runtime"
	"github.com/redis/go-redis/v9"
)

// quorum is n independent redis-servers started for one test, and a
// client on each.
type quorum struct {
	servers []*redistest.Server
	clients []redis.UniversalClient
	prefix  string
}

func startQuorum(t testing.TB, n int) *quorum {
	t.Helper()
	q := &quorum{prefix: uniquePrefix(t)}
	for range n {
		s := redistest.Start(t)
		// A dead server must fail a call quickly, not after go-redis's
		// default dial timeout and three retries.
		c := redis.NewClient(&redis.Options{Addr: s.Addr, DialTimeout: 300 * time.Millisecond, MaxRetries: -1})
		t.Cleanup(func() { c.Close() })
		q.servers = append(q.servers, s)
		q.clients = append(q.clients, c)
	}
	return q
}

// locker returns a quorum Locker on the servers, as one process would have.
func (q *quorum) locker(t testing.TB, opts ...runtime.Option) *runtime.Locker {
	t.Helper()
	l, err := runtime.NewQuorum(q.clients, append([]runtime.Option{runtime.WithKeyPrefix(q.prefix)}, opts...)...)
	if err != nil {
		t.Fatalf("NewQuorum: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// lockValues returns the lock values ("<holder> <fence> <waiters>") of the
// test's mutex keys on server i, by key.
func (q *quorum) lockValues(t *testing.T, i int) map[string]string {
	t.Helper()
	ctx := ctxTimeout(t, 5*time.Second)
	keys, err := q.clients[i].Keys(ctx, q.prefix+"mutex:*").Result()
	if err != nil {
		t.Fatalf("server %d: KEYS: %v", i+1, err)
	}
	out := map[string]string{}
	for _, k := range keys {
		if v, err := q.clients[i].Get(ctx, k).Result(); err == nil {
			out[k] = v
		}
	}
	return out
}

func mutexLock(key string, lease time.Duration) runtime.Lock {
	return runtime.Lock{Kind: runtime.Mutex, Key: key, Lease: lease}
}

// Three Lockers (three processes) increment a shared counter under one
// quorum lock, several goroutines each: no update may be lost, no two
// holders may overlap, and each holder's fence is above the one before.
func TestQuorumMutualExclusion(t *testing.T) {
	for _, n := range []int{3, 5} {
		t.Run(map[int]string{3: "3 servers", 5: "5 servers"}[n], func(t *testing.T) {
			q := startQuorum(t, n)
			contend(t, q, 8)
			for i := range q.servers {
				for k, v := range q.lockValues(t, i) {
					if !strings.HasPrefix(v, "! ") {
						t.Errorf("server %d: %s = %q left behind", i+1, k, v)
					}
				}
			}
		})
	}
}

// One server of 3 is frozen (SIGSTOP) while three Lockers contend: calls
// to it never return, yet every acquire goes through on the other two, and
// no update is lost.
func TestQuorumServerStalled(t *testing.T) {
	q := startQuorum(t, 3)
	pid := q.servers[0].Pid()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGCONT) })
	start := time.Now()
	contend(t, q, 4)
	t.Logf("36 grants with one server of 3 frozen took %v", time.Since(start).Round(time.Millisecond))
}

// contend runs 3 Lockers of 3 goroutines, each taking the lock rounds
// times to increment a counter, and checks that no update was lost, no two
// holders overlapped, and fences rose from holder to holder.
func contend(t *testing.T, q *quorum, rounds int) {
	t.Helper()
	const lockers, goroutines = 3, 3
	var (
		// counter and lastFence are read and written separately (atomics
		// only so the race detector, which cannot see the order Redis
		// imposes, stays quiet): only the quorum lock keeps an update from
		// being lost.
		counter, lastFence atomic.Int64
		inside, overlaps   atomic.Int32
		fenceErrs          atomic.Int32
	)
	ctx := ctxTimeout(t, 2*time.Minute)
	var wg sync.WaitGroup
	errs := make(chan error, lockers*goroutines)
	for range lockers {
		l := q.locker(t)
		for range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range rounds {
					held, err := l.Acquire(ctx, mutexLock("counter", 5*time.Second))
					if err != nil {
						errs <- err
						return
					}
					if inside.Add(1) != 1 {
						overlaps.Add(1)
					}
					fence, _ := runtime.Fence(held.Context())
					if fence <= lastFence.Load() {
						fenceErrs.Add(1)
					}
					lastFence.Store(fence)
					v := counter.Load()
					time.Sleep(time.Millisecond) // widen the window a lost update needs
					counter.Store(v + 1)
					inside.Add(-1)
					if err := held.Release(); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("acquire/release: %v", err)
	}
	if got, want := counter.Load(), int64(lockers*goroutines*rounds); got != want {
		t.Errorf("counter = %d, want %d: %d updates lost", got, want, want-got)
	}
	if overlaps.Load() != 0 || fenceErrs.Load() != 0 {
		t.Errorf("%d overlapping holders, %d fences not above the previous holder's", overlaps.Load(), fenceErrs.Load())
	}
}

// renewals counts EventRenewed per lock holder.
type renewals struct {
	mu sync.Mutex
	n  int
	ch chan struct{}
}

func newRenewals() *renewals { return &renewals{ch: make(chan struct{}, 100)} }

func (r *renewals) observe(e runtime.Event) {
	if e.Kind == runtime.EventRenewed {
		select {
		case r.ch <- struct{}{}:
		default:
		}
	}
}

// await waits for k renewals after the call.
func (r *renewals) await(t *testing.T, k int, within time.Duration) {
	t.Helper()
	for len(r.ch) > 0 {
		<-r.ch
	}
	deadline := time.After(within)
	for range k {
		select {
		case <-r.ch:
		case <-deadline:
			t.Fatalf("fewer than %d renewals within %v", k, within)
		}
	}
}

// One server of 3 is SIGKILLed while locks are held: the holders keep them
// (their renewals are confirmed by the other two), a second process cannot
// take them, new grants still work, and fences still rise.
func TestQuorumServerKilledWhileHeld(t *testing.T) {
	q := startQuorum(t, 3)
	ren := newRenewals()
	l1 := q.locker(t, runtime.WithObserver(ren.observe))
	l2 := q.locker(t)
	ctx := ctxTimeout(t, time.Minute)
	const lease = 900 * time.Millisecond
	held, err := l1.Acquire(ctx, mutexLock("a", lease))
	if err != nil {
		t.Fatal(err)
	}
	fence1, _ := runtime.Fence(held.Context())
	q.servers[0].Kill()

	// Renewals every lease/3 on the two left: more than a lease goes by.
	ren.await(t, 4, 30*time.Second)
	if err := context.Cause(held.Context()); err != nil {
		t.Fatalf("holder's context ended with one server of 3 down: %v", err)
	}
	if _, err := l2.Acquire(ctx, runtime.Lock{Kind: runtime.Mutex, Key: "a", Lease: lease, Wait: runtime.NoWait}); !errors.Is(err, runtime.ErrNotAcquired) {
		t.Fatalf("second process on a held lock with one server down: %v, want ErrNotAcquired", err)
	}
	other, err := l2.Acquire(ctx, mutexLock("b", lease))
	if err != nil {
		t.Fatalf("new grant with one server down: %v", err)
	}
	other.Release()

	if err := held.Release(); err != nil {
		t.Fatalf("release with one server down: %v", err)
	}
	last := fence1
	for i := range 5 {
		h, err := l2.Acquire(ctx, mutexLock("a", lease))
		if err != nil {
			t.Fatalf("grant %d with one server down: %v", i, err)
		}
		f, _ := runtime.Fence(h.Context())
		if f <= last {
			t.Errorf("grant %d: fence %d not above the previous %d", i, f, last)
		}
		last = f
		if err := h.Release(); err != nil {
			t.Fatalf("release %d: %v", i, err)
		}
	}
}

// Two servers of 3 are down: an acquire fails within its wait with an
// error that says so (ErrNoQuorum), and nothing is left held on the server
// that is up. When they come back, locks are granted again.
func TestQuorumTwoOfThreeDown(t *testing.T) {
	q := startQuorum(t, 3)
	l := q.locker(t)
	q.servers[1].Kill()
	q.servers[2].Kill()
	const wait = 2 * time.Second
	start := time.Now()
	_, err := l.Acquire(ctxTimeout(t, time.Minute), runtime.Lock{Kind: runtime.Mutex, Key: "a", Lease: 5 * time.Second, Wait: wait})
	took := time.Since(start)
	if !errors.Is(err, runtime.ErrNoQuorum) || errors.Is(err, runtime.ErrNotAcquired) {
		t.Fatalf("acquire with 2 of 3 servers down: %v, want ErrNoQuorum", err)
	}
	if !strings.Contains(err.Error(), "1 of 3 servers answered, 2 needed") {
		t.Errorf("error %q does not say how many servers answered", err)
	}
	if took > wait+2*time.Second {
		t.Errorf("acquire returned after %v, wait %v", took, wait)
	}
	t.Logf("acquire with 2 of 3 down failed after %v: %v", took.Round(time.Millisecond), err)
	for k, v := range q.lockValues(t, 0) {
		if !strings.HasPrefix(v, "! ") {
			t.Errorf("server 1: %s = %q held after the failed acquire", k, v)
		}
	}

	for _, s := range q.servers[1:] {
		if err := s.Restart(); err != nil {
			t.Fatal(err)
		}
	}
	h, err := l.Acquire(ctxTimeout(t, time.Minute), mutexLock("a", 5*time.Second))
	if err != nil {
		t.Fatalf("acquire after the servers came back: %v", err)
	}
	h.Release()
}

// A server restarted empty (no persistence) forgets the locks it held. The
// measured outcome: one such restart out of 3 changes nothing (the other
// two still hold the lock), but a second one within the lease lets another
// process take the lock while the first still holds it; the first learns
// it at its next renewal (within lease/3) and its context is cancelled.
// Hence the README's advice: persistence (appendfsync always) or a restart
// delayed by one lease.
func TestQuorumServerRestartedEmpty(t *testing.T) {
	q := startQuorum(t, 3)
	l1 := q.locker(t)
	l2 := q.locker(t)
	ctx := ctxTimeout(t, time.Minute)
	const lease = 3 * time.Second
	held, err := l1.Acquire(ctx, mutexLock("a", lease))
	if err != nil {
		t.Fatal(err)
	}
	tryOnce := runtime.Lock{Kind: runtime.Mutex, Key: "a", Lease: lease, Wait: runtime.NoWait}
	restart := func(i int) {
		q.servers[i].Kill()
		if err := q.servers[i].Restart(); err != nil {
			t.Fatal(err)
		}
	}

	restart(1)
	if _, err := l2.Acquire(ctx, tryOnce); !errors.Is(err, runtime.ErrNotAcquired) {
		t.Fatalf("after one server of 3 restarted empty: %v, want ErrNotAcquired", err)
	}
	restart(2)
	h2, err := l2.Acquire(ctx, tryOnce)
	if err != nil {
		t.Fatalf("after two servers restarted empty the lock was expected to be free on a majority: %v", err)
	}
	granted := time.Now()
	defer h2.Release()
	select {
	case <-held.Context().Done():
		t.Logf("two servers restarted empty: a second holder was granted; the first holder's context was cancelled %v later (lease %v): %v",
			time.Since(granted).Round(time.Millisecond), lease, context.Cause(held.Context()))
	case <-time.After(lease):
		t.Fatalf("the first holder was not told within a lease that its lock was lost")
	}
	if !errors.Is(context.Cause(held.Context()), runtime.ErrLockLost) {
		t.Errorf("cause %v, want ErrLockLost", context.Cause(held.Context()))
	}
	held.Release()
}

// A waiter is woken by the release, not by its retry timer: with a 30 s
// lease its registration window is 30 s and it would retry only every 10 s.
// It subscribes on every server that is up, so this holds with one of 3
// down too.
func TestQuorumWaiterWokenByRelease(t *testing.T) {
	for _, down := range []int{0, 1} {
		t.Run(map[int]string{0: "all up", 1: "one down"}[down], func(t *testing.T) {
			q := startQuorum(t, 3)
			if down == 1 {
				q.servers[2].Kill()
			}
			busy := make(chan struct{}, 10)
			holder := q.locker(t, runtime.WithWaiterWindow(30*time.Second))
			waiter := q.locker(t, runtime.WithWaiterWindow(30*time.Second), runtime.WithObserver(func(e runtime.Event) {
				if e.Kind == runtime.EventBusy {
					select {
					case busy <- struct{}{}:
					default:
					}
				}
			}))
			ctx := ctxTimeout(t, time.Minute)
			lock := runtime.Lock{Kind: runtime.Mutex, Key: "w", Lease: 30 * time.Second, Wait: 20 * time.Second}
			held, err := holder.Acquire(ctx, lock)
			if err != nil {
				t.Fatal(err)
			}
			got := make(chan error, 1)
			go func() {
				h, err := waiter.Acquire(ctx, lock)
				if err == nil {
					h.Release()
				}
				got <- err
			}()
			// The second busy reply comes after the subscription.
			for range 2 {
				select {
				case <-busy:
				case <-time.After(20 * time.Second):
					t.Fatal("the waiter did not get busy twice")
				}
			}
			released := time.Now()
			if err := held.Release(); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-got:
				if err != nil {
					t.Fatalf("waiter: %v", err)
				}
				t.Logf("granted %v after the release", time.Since(released).Round(time.Millisecond))
			case <-time.After(5 * time.Second):
				t.Fatal("the waiter was not woken by the release within 5 s (its retry timer is 10 s)")
			}
		})
	}
}

// deafBackend confirms every subscription and delivers nothing.
type deafBackend struct{ runtime.Backend }

func (deafBackend) Subscribe(ctx context.Context, channel string, deliver func(string)) (func(), error) {
	return func() {}, nil
}

// A member of the quorum may be a Cluster: its scripts publish with
// SPUBLISH, the others' with PUBLISH. Here the two single servers deliver
// no messages, so only the Cluster's SPUBLISH can wake the waiter before
// its 10 s retry timer.
func TestQuorumClusterMemberWakes(t *testing.T) {
	a, b := redistest.Start(t), redistest.Start(t)
	cl := redistest.StartCluster(t, 3)
	backends := []runtime.Backend{
		deafBackend{runtime.NewGoRedisBackend(a.Client(t))},
		deafBackend{runtime.NewGoRedisBackend(b.Client(t))},
		runtime.NewGoRedisBackend(cl.Client(t)),
	}
	newLocker := func(opts ...runtime.Option) *runtime.Locker {
		l, err := runtime.NewQuorumWithBackends(backends, append([]runtime.Option{runtime.WithWaiterWindow(30 * time.Second)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		return l
	}
	busy := make(chan struct{}, 10)
	holder := newLocker()
	waiter := newLocker(runtime.WithObserver(func(e runtime.Event) {
		if e.Kind == runtime.EventBusy {
			select {
			case busy <- struct{}{}:
			default:
			}
		}
	}))
	ctx := ctxTimeout(t, time.Minute)
	lock := runtime.Lock{Kind: runtime.Mutex, Key: "c", Lease: 30 * time.Second, Wait: 20 * time.Second}
	held, err := holder.Acquire(ctx, lock)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		h, err := waiter.Acquire(ctx, lock)
		if err == nil {
			h.Release()
		}
		got <- err
	}()
	for range 2 {
		select {
		case <-busy:
		case <-time.After(20 * time.Second):
			t.Fatal("the waiter did not get busy twice")
		}
	}
	if err := held.Release(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("waiter: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiter was not woken by the Cluster member's SPUBLISH within 5 s (its retry timer is 10 s)")
	}
}

// When a majority can no longer confirm the renewals, the holder's context
// is cancelled (ErrLockLost) at its local deadline, inside the lease.
func TestQuorumHolderToldWhenMajorityLost(t *testing.T) {
	q := startQuorum(t, 3)
	l := q.locker(t)
	const lease = 2 * time.Second
	start := time.Now()
	held, err := l.Acquire(ctxTimeout(t, time.Minute), mutexLock("a", lease))
	if err != nil {
		t.Fatal(err)
	}
	q.servers[0].Kill()
	q.servers[1].Kill()
	select {
	case <-held.Context().Done():
	case <-time.After(2 * lease):
		t.Fatal("the holder's context is still live two leases after 2 of 3 servers went down")
	}
	took := time.Since(start)
	if !errors.Is(context.Cause(held.Context()), runtime.ErrLockLost) {
		t.Errorf("cause %v, want ErrLockLost", context.Cause(held.Context()))
	}
	// Its local deadline falls 1% + 2 ms before the lease ends; allow for
	// a busy machine's timer slack.
	if took > lease+500*time.Millisecond {
		t.Errorf("cancelled %v after the acquire started, lease %v", took, lease)
	}
	t.Logf("holder told %v after the acquire started (lease %v)", took.Round(time.Millisecond), lease)
	held.Release()
}

// Re-entry follows the call chain on a quorum Locker as on one server: the
// holder's context re-enters with the same fence, another context of the
// same process is refused.
func TestQuorumReentry(t *testing.T) {
	q := startQuorum(t, 3)
	l := q.locker(t)
	ctx := ctxTimeout(t, time.Minute)
	outer, err := l.Acquire(ctx, mutexLock("r", 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	inner, err := l.Acquire(outer.Context(), mutexLock("r", 5*time.Second))
	if err != nil {
		t.Fatalf("re-entry: %v", err)
	}
	f1, _ := runtime.Fence(outer.Context())
	f2, _ := runtime.Fence(inner.Context())
	if f1 != f2 {
		t.Errorf("re-entry fence %d, outer %d", f2, f1)
	}
	if _, err := l.Acquire(ctx, runtime.Lock{Kind: runtime.Mutex, Key: "r", Wait: runtime.NoWait}); !errors.Is(err, runtime.ErrNotAcquired) {
		t.Errorf("another call chain of the same process: %v, want ErrNotAcquired", err)
	}
	if err := inner.Release(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Acquire(ctx, runtime.Lock{Kind: runtime.Mutex, Key: "r", Wait: runtime.NoWait}); !errors.Is(err, runtime.ErrNotAcquired) {
		t.Errorf("after the inner release, the outer hold must remain: %v", err)
	}
	if err := outer.Release(); err != nil {
		t.Fatal(err)
	}
}

// A quorum Locker takes only mutexes; its constructor checks its input.
func TestQuorumRefuses(t *testing.T) {
	q := startQuorum(t, 3)
	l := q.locker(t)
	for _, k := range []runtime.Kind{runtime.Fair, runtime.Read, runtime.Write, runtime.Semaphore} {
		lk := runtime.Lock{Kind: k, Key: "x"}
		if k == runtime.Semaphore {
			lk.Permits = 2
		}
		_, err := l.Acquire(context.Background(), lk)
		if !errors.Is(err, runtime.ErrInvalidLock) || !strings.Contains(err.Error(), "kind "+k.String()+" is not supported on a quorum Locker") {
			t.Errorf("%s on a quorum Locker: %v, want ErrInvalidLock naming the kind", k, err)
		}
	}
	if _, err := runtime.NewQuorum(q.clients[:2]); !errors.Is(err, runtime.ErrInvalidLock) {
		t.Errorf("NewQuorum with 2 clients: %v, want ErrInvalidLock", err)
	}
	if _, err := runtime.NewQuorum([]redis.UniversalClient{q.clients[0], nil, q.clients[2]}); !errors.Is(err, runtime.ErrInvalidLock) {
		t.Errorf("NewQuorum with a nil client: %v, want ErrInvalidLock", err)
	}
	if _, err := runtime.NewQuorum(q.clients, runtime.WithReplicas(1, time.Second)); !errors.Is(err, runtime.ErrInvalidLock) {
		t.Errorf("NewQuorum with WithReplicas: %v, want ErrInvalidLock", err)
	}
}

// BenchmarkQuorumAcquireRelease: an uncontended mutex acquire and release
// on 3 servers (acquire, fence write-back, release: three round trips to
// every server, in parallel), in PING round trips of one server.
func BenchmarkQuorumAcquireRelease(b *testing.B) {
	q := startQuorum(b, 3)
	l := q.locker(b)
	rdb := q.clients[0].(*redis.Client)
	ctx := context.Background()
	var op, ping samples
	for b.Loop() {
		ping = append(ping, pingOnce(b, rdb))
		t0 := time.Now()
		h, err := l.Acquire(ctx, runtime.Lock{Kind: runtime.Mutex, Key: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		if err := h.Release(); err != nil {
			b.Fatal(err)
		}
		op = append(op, time.Since(t0))
	}
	report(b, "op", op, ping)
}
