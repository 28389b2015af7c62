package failover

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockgen/lockgen/redistest"
	"github.com/lockgen/lockgen/runtime"
	"github.com/redis/go-redis/v9"
)

// sentinelLease is the lease of the locks of the Sentinel tests: long
// enough that a lock held across a SIGKILL failover (a few seconds without
// a master) survives it, as the measurements did.
const sentinelLease = 8 * time.Second

// sentinelWakeBound is how soon after a release following a failover its
// waiter must have the lock: "within a second", with slack for a busy
// machine.
const sentinelWakeBound = 2 * time.Second

var sentinelPrefixSeq atomic.Int64

// sentinelPrefix returns a key prefix no other test uses.
func sentinelPrefix(t testing.TB) string {
	return fmt.Sprintf("fo%d:", sentinelPrefixSeq.Add(1))
}

// sentinelCtx returns a context that ends after d or with the test.
func sentinelCtx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// sentinelEvents records a Locker's events and lets a test wait for one.
type sentinelEvents struct {
	mu      sync.Mutex
	events  []runtime.Event
	changed chan struct{}
}

func newSentinelEvents() *sentinelEvents { return &sentinelEvents{changed: make(chan struct{})} }

func (e *sentinelEvents) observe(ev runtime.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.events = append(e.events, ev)
	close(e.changed)
	e.changed = make(chan struct{})
}

// waitFor waits until an event of kind on the lock with key (any key if
// empty) has been seen.
func (e *sentinelEvents) waitFor(t testing.TB, kind runtime.EventKind, key string, d time.Duration) {
	t.Helper()
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		e.mu.Lock()
		for _, ev := range e.events {
			if ev.Kind == kind && (key == "" || ev.Lock.Key == key) {
				e.mu.Unlock()
				return
			}
		}
		ch := e.changed
		e.mu.Unlock()
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("no %v event on %q within %v", kind, key, d)
		}
	}
}

// count returns how many events of kind were seen.
func (e *sentinelEvents) count(kind runtime.EventKind) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, ev := range e.events {
		if ev.Kind == kind {
			n++
		}
	}
	return n
}

// sentinelClient is a Locker on its own failover client (a process of its
// own, as far as Redis can tell).
type sentinelClient struct {
	*runtime.Locker
	ev  *sentinelEvents
	rdb *redis.Client
}

// sentinelLocker returns a sentinelClient, closed when the test ends.
func sentinelLocker(t testing.TB, d *redistest.Sentinel, prefix string, opts ...runtime.Option) *sentinelClient {
	ev := newSentinelEvents()
	rdb := redis.NewFailoverClient(d.FailoverOptions())
	opts = append([]runtime.Option{runtime.WithKeyPrefix(prefix), runtime.WithDefaultLease(sentinelLease), runtime.WithObserver(ev.observe)}, opts...)
	l := runtime.New(rdb, opts...)
	t.Cleanup(func() {
		l.Close()
		rdb.Close()
	})
	return &sentinelClient{l, ev, rdb}
}

// waitFollows waits until c's failover client talks to master.
func (c *sentinelClient) waitFollows(t testing.TB, ctx context.Context, master *redistest.Server) {
	t.Helper()
	want := fmt.Sprintf("tcp_port:%d", master.Port)
	for {
		info, err := c.rdb.Info(ctx, "server").Result()
		if err == nil && strings.Contains(info, want) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the failover client does not follow the new master %s: %v", master.Addr, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// sentinelCase is one lock held and one waited on behind it, on the same
// key: together the cases hold and wait on every kind.
type sentinelCase struct {
	name         string
	held, waited runtime.Lock
}

func sentinelCases() []sentinelCase {
	return []sentinelCase{
		{"mutex", runtime.Lock{Kind: runtime.Mutex, Key: "m"}, runtime.Lock{Kind: runtime.Mutex, Key: "m"}},
		{"fair", runtime.Lock{Kind: runtime.Fair, Key: "f"}, runtime.Lock{Kind: runtime.Fair, Key: "f"}},
		{"write held, read waits", runtime.Lock{Kind: runtime.Write, Key: "wr"}, runtime.Lock{Kind: runtime.Read, Key: "wr"}},
		{"read held, write waits", runtime.Lock{Kind: runtime.Read, Key: "rw"}, runtime.Lock{Kind: runtime.Write, Key: "rw"}},
		{"semaphore", runtime.Lock{Kind: runtime.Semaphore, Key: "s", Permits: 1}, runtime.Lock{Kind: runtime.Semaphore, Key: "s", Permits: 1}},
	}
}

// sentinelOutcome is how a waiter's Acquire ended.
type sentinelOutcome struct {
	held *runtime.Held
	err  error
	at   time.Time
}

// sentinelAcquireAsync starts an Acquire in the background.
func sentinelAcquireAsync(ctx context.Context, l *runtime.Locker, lk runtime.Lock) <-chan sentinelOutcome {
	ch := make(chan sentinelOutcome, 1)
	go func() {
		h, err := l.Acquire(ctx, lk)
		ch <- sentinelOutcome{h, err, time.Now()}
	}()
	return ch
}

// sentinelReplicated waits until every replica of the current master has
// everything written so far (WAIT 2), so that what is held now survives a
// failover.
func sentinelReplicated(t testing.TB, ctx context.Context, d *redistest.Sentinel) {
	t.Helper()
	m, err := d.Master(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(m.Options())
	defer c.Close()
	if n, err := c.Wait(ctx, 2, 5*time.Second).Result(); err != nil || n != 2 {
		t.Fatalf("WAIT 2 on the master: %d replicas, %v", n, err)
	}
}

// sentinelStillHeld reports an error if h's context is done.
func sentinelStillHeld(h *runtime.Held) error {
	if err := h.Context().Err(); err != nil {
		return fmt.Errorf("holder cancelled: %w", errors.Join(err, context.Cause(h.Context())))
	}
	return nil
}

// sentinelChurnPeriod is how often the churn takes a fresh lock.
const sentinelChurnPeriod = 10 * time.Millisecond

// sentinelChurnLease is the lease of the churn's locks: longer than a
// scenario, so that every grant is still due when the new master is
// checked for it.
const sentinelChurnLease = time.Minute

// sentinelChurn has two clients try, every sentinelChurnPeriod, to take
// the same fresh mutex once each (renew=false, so nothing renews the
// thousands of grants): outside a failover exactly one of them gets it;
// both getting it is a double grant.
type sentinelChurn struct {
	a, b     *sentinelClient
	prefix   string
	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}

	mu     sync.Mutex
	stats  sentinelChurnStats
	grants []sentinelGrant
}

// sentinelGrant is one lock the churn got.
type sentinelGrant struct {
	key   string // the mutex's Redis key
	fence int64
	until time.Time // when its holder stops believing it holds it
}

// sentinelChurnStats is what a churn saw.
type sentinelChurnStats struct {
	rounds, grants, doubles   int
	notReplicated, otherError int
	sampleError               error
	lastGrant                 time.Time
	longestGap                time.Duration // longest time without a grant
	lost                      int           // grants the new master does not know while their holders still hold them
}

// startSentinelChurn starts a churn of two new clients with opts; stop it
// with stopChurn.
func startSentinelChurn(t testing.TB, d *redistest.Sentinel, prefix string, opts ...runtime.Option) *sentinelChurn {
	c := &sentinelChurn{
		a:      sentinelLocker(t, d, prefix, opts...),
		b:      sentinelLocker(t, d, prefix, opts...),
		prefix: prefix,
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
	}
	c.stats.lastGrant = time.Now()
	go c.run()
	return c
}

func (c *sentinelChurn) run() {
	defer close(c.done)
	tick := time.NewTicker(sentinelChurnPeriod)
	defer tick.Stop()
	for round := 0; ; round++ {
		select {
		case <-c.stop:
			return
		case <-tick.C:
		}
		lk := runtime.Lock{Kind: runtime.Mutex, Key: fmt.Sprintf("c%d", round), Lease: sentinelChurnLease, NoRenew: true, Wait: runtime.NoWait}
		var errs [2]error
		var held [2]*runtime.Held
		var wg sync.WaitGroup
		for i, l := range []*sentinelClient{c.a, c.b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Not bounded by a context of the round: the Held's
				// context would end with it. A try-once call is bounded
				// by the client's own timeouts.
				held[i], errs[i] = l.Acquire(context.Background(), lk)
			}()
		}
		wg.Wait()
		c.count(errs)
		c.record(lk, held)
	}
}

// count adds one round's outcomes to the stats.
func (c *sentinelChurn) count(errs [2]error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := &c.stats
	s.rounds++
	granted := 0
	for _, err := range errs {
		switch {
		case err == nil:
			granted++
		case errors.Is(err, runtime.ErrNotAcquired):
		case errors.Is(err, runtime.ErrNotReplicated):
			s.notReplicated++
		default:
			s.otherError++
			s.sampleError = err
		}
	}
	s.grants += granted
	if granted == 2 {
		s.doubles++
	}
	if granted > 0 {
		now := time.Now()
		s.longestGap = max(s.longestGap, now.Sub(s.lastGrant))
		s.lastGrant = now
	}
}

// record remembers the grants of a round.
func (c *sentinelChurn) record(lk runtime.Lock, held [2]*runtime.Held) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, h := range held {
		if h == nil {
			continue
		}
		fence, _ := runtime.Fence(h.Context())
		until, _ := h.Context().Deadline()
		c.grants = append(c.grants, sentinelGrant{key: c.prefix + "mutex:{" + lk.Key + "}", fence: fence, until: until})
	}
}

// countLost counts the grants that master does not have although their
// holders still hold them: a third client would be granted them again.
func (c *sentinelChurn) countLost(ctx context.Context, master *redistest.Server) error {
	rdb := redis.NewClient(master.Options())
	defer rdb.Close()
	c.mu.Lock()
	grants := append([]sentinelGrant(nil), c.grants...)
	c.mu.Unlock()
	cmds := make([]*redis.StringCmd, len(grants))
	_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, g := range grants {
			cmds[i] = p.Get(ctx, g.key)
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return err
	}
	checked := time.Now()
	lost := 0
	for i, g := range grants {
		v, _ := cmds[i].Result()
		fields := strings.Fields(v)
		if checked.Before(g.until) && (len(fields) < 2 || fields[1] != strconv.FormatInt(g.fence, 10)) {
			lost++
		}
	}
	c.mu.Lock()
	c.stats.lost = lost
	c.mu.Unlock()
	return nil
}

// stopChurn stops the churn and returns what it saw.
// It may be called again, to read the stats after countLost.
func (c *sentinelChurn) stopChurn() sentinelChurnStats {
	c.stopOnce.Do(func() {
		close(c.stop)
		<-c.done
		c.mu.Lock()
		defer c.mu.Unlock()
		// A churn that got nothing since its last grant was without one
		// until now.
		c.stats.longestGap = max(c.stats.longestGap, time.Since(c.stats.lastGrant))
	})
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats
}
