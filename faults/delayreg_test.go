package faults

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
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

// (h) Delayed registrations. Mutex waiters talk to Redis each through a
// proxy of its own that delays every request, reply and wake message by an
// amount of its own, drawn afresh for each Acquire (a trial): none for
// half the chunks, else up to a limit picked per trial from 100 ms to
// 700 ms, around a third, a half and the whole of the 500 ms of an offer
// (and of protocol 1's waiter window). Meanwhile two clients straight on
// the server take the same key with one attempt each, hold it for up to
// 200 ms and release it, all the time. A lane is a key with three such
// waiters and two such direct clients; the lanes run for delayRegRun.
// Throughout:
//
//   - never two holders: whoever believes it holds the lock (Acquire
//     returned nil) checks on entry, through a client of its own straight
//     to the server, that the key names it and its fence, and a count of
//     the lane's holders in their critical section must not exceed one;
//   - fences strictly increase from one holder to the next;
//   - nothing leaks: every Acquire returns, and at the end the key is free
//     and no holder id of the lane is left anywhere under the prefix.
//
// Protocol 1 (a waiter took a hand-over message for its grant) failed
// this: a waiter's registration R_k came late, a release handed it the
// lock until R_k's window ran out, its renewal R_{k+1} was delayed past
// that while a direct client took the lapsed lock with the next fence;
// R_{k+1}, busy, dated the registration anew, and the hand-over message
// was then accepted: Acquire returned nil with the old fence while the
// key named the direct client. A release hands the lock to the waiter
// whose registration is oldest, the one most likely to be in such a gap,
// which is why a lane has several waiters. Since protocol 2 a message
// counts only while it is provably current: a waiter takes an offer
// message for a hand-over only within half an offer of the first send of
// a request that could register its holder id (every offer to that id is
// younger, and lasts the whole offer), and otherwise claims it first. The
// delays here put messages on both sides of that line.
func TestDelayedRegistrationsNeverTwoHolders(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// Every lane is set up and warmed before any runs: a lane's warm-up
	// through its fresh proxy then does not compete with the trials of
	// the lanes before it, and every lane runs for the whole delayRegRun.
	lanes := make([]*delayLane, delayRegLanes)
	for i := range lanes {
		lanes[i] = newDelayLane(t, e, i)
	}
	var wg sync.WaitGroup
	deadline := time.Now().Add(delayRegRun)
	for _, l := range lanes {
		wg.Add(1)
		go func() { defer wg.Done(); l.run(deadline) }()
	}
	ended := make(chan struct{})
	go func() { wg.Wait(); close(ended) }()
	select {
	case <-ended:
	case <-time.After(delayRegRun + 30*time.Second):
		t.Fatalf("(h) delayed registrations: the lanes did not end within %v of their deadline", 30*time.Second)
	}
	var sum delayFigures
	for _, l := range lanes {
		l.checkFree()
		sum.add(l.fig)
		for i, v := range l.violations() {
			if i == 5 {
				t.Errorf("(h) lane %d: %d violations in all", l.n, len(l.violations()))
				break
			}
			t.Errorf("(h) lane %d: %s", l.n, v)
		}
	}
	t.Logf("(h) delayed registrations: %d lanes, %d waiter trials: %d granted, %d busy to the end of the wait, %d other errors (e.g. %v); %d direct grants; %d violations (%d holders the key did not name)",
		len(lanes), sum.trials, sum.waiterGrants, sum.busy, sum.otherErrs, sum.firstErr, sum.directGrants, sum.violations, sum.notInKey)
	if sum.waiterGrants < 10 || sum.directGrants < 10 {
		t.Errorf("(h) delayed registrations: %d waiter grants, %d direct grants; the run did not exercise the lock", sum.waiterGrants, sum.directGrants)
	}
}

// Dimensions of the delayed-registration case.
const (
	delayRegLanes   = 16 // at most 26: a lane is a letter in its holder ids
	delayRegWaiters = 3  // per lane, each through a proxy of its own
	delayRegRun     = 15 * time.Second
	delayRegLease   = 5 * time.Second // no hold of the case comes near it
	delayRegWait    = 3 * time.Second // a waiter trial's bound
)

// delayMaxima are the largest delays a trial may draw, one picked per
// trial: below and around a third of 500 ms, around half of it, around it,
// and past it.
var delayMaxima = []time.Duration{100 * time.Millisecond, 250 * time.Millisecond, 400 * time.Millisecond, 500 * time.Millisecond, 700 * time.Millisecond}

// delayLane is one key with its delayed waiters and two direct clients.
type delayLane struct {
	t      *testing.T
	e      *env
	n      int
	lock   runtime.Lock
	key    string // the lock's key in Redis
	waiter [delayRegWaiters]delayWaiter
	direct [2]*subject
	tags   []string // holder id prefixes of the lane's subjects

	inside atomic.Int32 // holders in their critical section now

	mu        sync.Mutex
	lastFence int64
	errs      []string
	fig       delayFigures
}

// delayWaiter is a waiter and the proxy it reaches Redis through.
type delayWaiter struct {
	*subject
	proxy *redistest.Proxy
}

// delayFigures are what a lane counts.
type delayFigures struct {
	trials, waiterGrants, busy, otherErrs, directGrants int

	// violations counts the entries that broke a check, notInKey those
	// of them whose holder the key did not name (a second holder).
	violations, notInKey int
	firstErr             error
}

func (f *delayFigures) add(o delayFigures) {
	f.trials += o.trials
	f.waiterGrants += o.waiterGrants
	f.busy += o.busy
	f.otherErrs += o.otherErrs
	f.directGrants += o.directGrants
	f.violations += o.violations
	f.notInKey += o.notInKey
	if f.firstErr == nil {
		f.firstErr = o.firstErr
	}
}

func newDelayLane(t *testing.T, e *env, n int) *delayLane {
	l := &delayLane{t: t, e: e, n: n,
		lock: runtime.Lock{Kind: runtime.Mutex, Key: fmt.Sprintf("delayreg-%d", n), Lease: delayRegLease},
	}
	l.key = e.prefix + "mutex:{" + l.lock.Key + "}"
	all := []*subject{}
	for i := range l.waiter {
		proxy := redistest.StartProxy(t, e.srv.Addr)
		l.waiter[i] = delayWaiter{e.locker(e.client(proxy.Addr, nil), fmt.Sprintf("w%c%d", 'a'+n, i)), proxy}
		all = append(all, l.waiter[i].subject)
	}
	for i := range l.direct {
		l.direct[i] = e.locker(e.client(e.srv.Addr, nil), fmt.Sprintf("d%c%d", 'a'+n, i))
		all = append(all, l.direct[i])
	}
	for i, s := range all {
		if i < len(l.waiter) {
			warmThroughProxy(t, s, l.waiter[i].proxy, l.lock)
		} else {
			warmScripts(t, s, l.lock)
		}
		l.tags = append(l.tags, s.ids.tag+".")
	}
	return l
}

// run runs the lane's direct clients and waiter trials until deadline,
// and sets the waiters' proxies to forward again.
func (l *delayLane) run(deadline time.Time) {
	var wg sync.WaitGroup
	for _, d := range l.direct {
		wg.Add(1)
		go func() { defer wg.Done(); l.runDirect(d, deadline) }()
	}
	for _, w := range l.waiter {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				l.waiterTrial(w)
			}
			w.proxy.SetMode(redistest.Forward())
		}()
	}
	wg.Wait()
}

// waiterTrial draws the trial's delays and runs one Acquire of w.
func (l *delayLane) waiterTrial(w delayWaiter) {
	limit := delayMaxima[rand.IntN(len(delayMaxima))]
	w.proxy.SetMode(redistest.DelayEach(func(bool) time.Duration {
		if rand.IntN(2) == 0 {
			return 0 // half the chunks go at once: delays differ
		}
		return rand.N(limit)
	}))
	lk := l.lock
	lk.Wait = delayRegWait
	ctx, cancel := context.WithTimeout(context.Background(), delayRegWait+10*time.Second)
	o := acquire(ctx, w.subject, lk)
	cancel()
	l.mu.Lock()
	l.fig.trials++
	switch {
	case o.err == nil:
		l.fig.waiterGrants++
	case errors.Is(o.err, runtime.ErrNotAcquired):
		l.fig.busy++
	default:
		l.fig.otherErrs++
		if l.fig.firstErr == nil {
			l.fig.firstErr = o.err
		}
	}
	l.mu.Unlock()
	if o.err == nil {
		l.hold(o.held, o.holder, 5*time.Millisecond)
	}
}

// runDirect takes the lock with one attempt at a time until deadline.
func (l *delayLane) runDirect(s *subject, deadline time.Time) {
	lk := l.lock
	lk.Wait = runtime.NoWait
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		o := acquire(ctx, s, lk)
		cancel()
		if o.err != nil {
			time.Sleep(5*time.Millisecond + rand.N(10*time.Millisecond))
			continue
		}
		l.mu.Lock()
		l.fig.directGrants++
		l.mu.Unlock()
		l.hold(o.held, o.holder, rand.N(200*time.Millisecond))
		time.Sleep(rand.N(20 * time.Millisecond))
	}
}

// hold is a critical section: it checks the lock on entry, stays for d,
// and releases. The release's outcome is not the case's business (a
// delayed one may time out; its clean-up is checked at the end).
func (l *delayLane) hold(h *runtime.Held, holder string, d time.Duration) {
	fence, _ := runtime.Fence(h.Context())
	l.enter(holder, fence)
	time.Sleep(d)
	l.inside.Add(-1)
	h.Release()
}

// enter checks that holder, which believes it holds the lock with fence,
// is alone in its critical section, that the key says so, and that its
// fence is above the previous holder's.
// One entry that breaks any of these is one violation.
func (l *delayLane) enter(holder string, fence int64) {
	var wrong []string
	if n := l.inside.Add(1); n > 1 {
		wrong = append(wrong, fmt.Sprintf("%d other holder(s) inside", n-1))
	}
	v, err := l.e.direct.Get(context.Background(), l.key).Result()
	stale := false
	if f := strings.Fields(v); err != nil || len(f) < 2 || f[0] != holder || f[1] != strconv.FormatInt(fence, 10) {
		wrong = append(wrong, fmt.Sprintf("the key says %q (%v)", v, err))
		stale = true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if stale {
		l.fig.notInKey++
	}
	if fence <= l.lastFence {
		wrong = append(wrong, fmt.Sprintf("the previous holder's fence was %d", l.lastFence))
	}
	l.lastFence = max(l.lastFence, fence)
	if len(wrong) > 0 {
		l.fig.violations++
		l.errs = append(l.errs, fmt.Sprintf("%s: %s believes it holds the lock with fence %d, but %s",
			time.Now().Format("15:04:05.000"), holder, fence, strings.Join(wrong, "; ")))
	}
}

func (l *delayLane) violations() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.errs...)
}

// checkFree checks, once the lane has ended and its proxy forwards again,
// that the key becomes free and no holder id of the lane is left, within
// the clean-up bound.
func (l *delayLane) checkFree() {
	ctx := ctxFor(l.t, cleanupBound+10*time.Second)
	deadline := time.Now().Add(cleanupBound)
	for {
		v, err := l.e.direct.Get(ctx, l.key).Result()
		free := err == nil && strings.HasPrefix(v, "! ") || errors.Is(err, redis.Nil)
		var left []string
		for _, tag := range l.tags {
			found, terr := traces(ctx, l.e.direct, l.e.prefix, tag)
			if terr != nil {
				l.t.Fatalf("(h) lane %d: scan: %v", l.n, terr)
			}
			left = append(left, found...)
		}
		if free && len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			l.t.Errorf("(h) lane %d: %v after the lane ended: key %q (%v), traces %s", l.n, cleanupBound, v, err, strings.Join(left, "; "))
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}
