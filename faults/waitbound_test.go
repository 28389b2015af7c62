package faults

import (
	"fmt"
	"testing"
	"time"

	"github.com/lockgen/lockgen/runtime"
)

// (d), (c) A caller with Wait = 1s returns within 1.5 s even when Redis
// does not answer: here the server sleeps 3 s (DEBUG SLEEP) while the lock
// is held by another. Two waiters of each kind: one already waiting when
// the sleep starts (its wait ends during the sleep), one that starts
// during the sleep. Once the sleep is over and the clean-up has run, none
// of them is left queued or marked as the next holder.
func TestWaitBoundDuringDebugSleep(t *testing.T) {
	t.Parallel()
	const wait = time.Second
	e := newEnv(t)
	holder := e.locker(e.client(e.srv.Addr, nil), "dh")
	locks := []runtime.Lock{
		{Kind: runtime.Mutex, Key: "sleep", Lease: 10 * time.Second, Wait: wait},
		{Kind: runtime.Fair, Key: "sleep", Lease: 10 * time.Second, Wait: wait},
	}
	h := acquire(ctxFor(t, 10*time.Second), holder, locks...)
	if h.err != nil {
		t.Fatal(h.err)
	}

	type waiter struct {
		name string
		s    *subject
		ch   <-chan outcome
	}
	var waiters []waiter
	for _, lk := range locks {
		s := e.locker(e.client(e.srv.Addr, nil), "dw")
		ch := acquireAsync(ctxFor(t, time.Minute), s, lk)
		s.ev.wait(t, runtime.EventBusy, "", 10*time.Second)
		waiters = append(waiters, waiter{lk.Kind.String() + " waiting before the sleep", s, ch})
	}
	slept, err := e.srv.DebugSleep(3 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, lk := range locks {
		s := e.locker(e.client(e.srv.Addr, nil), "dw")
		waiters = append(waiters, waiter{lk.Kind.String() + " starting during the sleep", s, acquireAsync(ctxFor(t, time.Minute), s, lk)})
	}

	outcomes := make([]outcome, len(waiters))
	for i, w := range waiters {
		outcomes[i] = await(t, w.ch, 20*time.Second, w.name)
		t.Logf("(d) wait=1s, %s: returned after %v: %v", w.name, outcomes[i].took().Round(time.Millisecond), outcomes[i].err)
		if took := outcomes[i].took(); took > wait+waitSlack {
			t.Errorf("(d) wait=1s, %s: returned after %v; want within %v", w.name, took.Round(time.Millisecond), wait+waitSlack)
		}
	}
	if err := <-slept; err != nil {
		t.Fatalf("DEBUG SLEEP: %v", err)
	}
	for i, w := range waiters {
		if outcomes[i].err == nil {
			t.Errorf("%s: acquired a lock that another holds", w.name)
			continue
		}
		checkFailedAcquire(t, e, w.s, outcomes[i], "(c) "+w.name)
	}
	rerr := h.held.Release()
	if rerr != nil {
		t.Errorf("holder's release after the sleep: %v", rerr)
	}
	checkGone(t, e, h.holder, rerr)
}

// (d), (c) The ghost fair waiter. G (client ReadTimeout 1 s, no retries)
// waits with Wait = 1s behind a holder, W waits behind G. Writes are
// paused for 3 s (CLIENT PAUSE WRITE) before G's wait ends, so G cannot
// leave the queue in time: G must still return within 1.5 s, and must not
// be left in the queue as a ghost. After the pause the holder releases,
// and W, the next live waiter, must get the lock at once (under a second),
// not after G's place has lapsed. (The release waits for the check of (c),
// which polls for up to cleanupBound until the runtime reports its
// clean-ups; W's delay is measured from the release all the same.)
func TestGhostFairWaiterDuringWritePause(t *testing.T) {
	t.Parallel()
	// Longer than the pause and cleanupBound together, so that the ghost's
	// place cannot lapse by itself before the check of (c), nor soon after
	// the release.
	const lease = 12 * time.Second
	e := newEnv(t)
	lock := runtime.Lock{Kind: runtime.Fair, Key: "ghost", Lease: lease}
	holder := e.locker(e.client(e.srv.Addr, nil), "gh")
	h := acquire(ctxFor(t, 10*time.Second), holder, lock)
	if h.err != nil {
		t.Fatal(h.err)
	}

	ghost := e.locker(e.client(e.srv.Addr, both(readTimeout(time.Second), noRetries)), "gg")
	gLock := lock
	gLock.Wait = time.Second
	gStart := time.Now()
	gch := acquireAsync(ctxFor(t, time.Minute), ghost, gLock)
	ghost.ev.wait(t, runtime.EventBusy, "", 5*time.Second)
	live := e.locker(e.client(e.srv.Addr, nil), "gw")
	wch := acquireAsync(ctxFor(t, time.Minute), live, lock)
	live.ev.wait(t, runtime.EventBusy, "", 5*time.Second)

	// The pause starts halfway through G's wait, so that whatever G sends
	// when its wait ends (a last attempt, leaving the queue) falls well
	// inside it, and each of those times out (1 s) before it ends.
	time.Sleep(time.Until(gStart.Add(gLock.Wait / 2)))
	if err := e.srv.PauseWrites(ctxFor(t, 5*time.Second), 3*time.Second); err != nil {
		t.Fatal(err)
	}
	g := await(t, gch, 20*time.Second, "ghost waiter")
	t.Logf("(d) wait=1s fair waiter during a 3 s CLIENT PAUSE WRITE (ReadTimeout 1 s, no retries): returned after %v: %v", g.took().Round(time.Millisecond), g.err)
	if g.took() > gLock.Wait+waitSlack {
		t.Errorf("(d) wait=1s fair waiter during CLIENT PAUSE WRITE returned after %v; want within %v", g.took().Round(time.Millisecond), gLock.Wait+waitSlack)
	}
	if err := e.srv.WaitWritable(ctxFor(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	if g.err == nil {
		t.Fatalf("the ghost waiter acquired a lock that another held")
	}
	checkFailedAcquire(t, e, ghost, g, "(c) the ghost fair waiter")

	released := time.Now()
	rerr := h.held.Release()
	if rerr != nil {
		t.Errorf("holder's release after the pause: %v", rerr)
	}
	checkGone(t, e, h.holder, rerr)
	w := await(t, wch, 20*time.Second, "live waiter")
	if w.err != nil {
		t.Fatalf("live waiter: %v", w.err)
	}
	delay := w.returned.Sub(released)
	t.Logf("(d) ghost fair waiter: the next live waiter got the lock %v after the holder's release (lease %v)", delay.Round(time.Millisecond), lease)
	if delay >= time.Second {
		t.Errorf("(d) the live waiter got the lock %v after the release; want under 1s, not after the ghost's place lapsed", delay.Round(time.Millisecond))
	}
	rerr = w.held.Release()
	checkGone(t, e, w.holder, rerr)
}

// (d), (a) Many callers of one Locker, each with a deadline (a wait, or a
// context's), while the server sleeps 2 s: the default go-redis client
// (no ContextTimeoutEnabled) would wait its own read timeout, so calls
// that find the round trips busy wait in the Locker's queue, listening to
// their deadlines, and the first few run on goroutines of their own. Every
// caller must return within its bound, and once the sleep is over and the
// Locker has closed (which waits for its clean-ups), no holder id of any
// of them may be left in Redis.
func TestManyDeadlinesDuringDebugSleep(t *testing.T) {
	t.Parallel()
	const bound, callers = 500 * time.Millisecond, 24
	e := newEnv(t)
	s := e.locker(e.client(e.srv.Addr, nil), "qd")
	warmScripts(t, s, runtime.Lock{Kind: runtime.Mutex, Key: "many"})
	slept, err := e.srv.DebugSleep(2 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	chans := make([]<-chan outcome, callers)
	for i := range chans {
		lock := runtime.Lock{Kind: runtime.Mutex, Key: fmt.Sprint("many", i)}
		ctx := ctxFor(t, time.Minute)
		if i%2 == 0 {
			lock.Wait = bound // bounded by the wait
		} else {
			ctx = ctxFor(t, bound) // bounded by the context
		}
		chans[i] = acquireAsync(ctx, s, lock)
	}
	for i, ch := range chans {
		o := await(t, ch, 20*time.Second, fmt.Sprint("caller ", i))
		if o.err == nil {
			t.Errorf("caller %d: acquired while the server slept", i)
			o.held.Release()
		}
		if took := o.took(); took > bound+waitSlack {
			t.Errorf("caller %d: returned after %v, want within %v: %v", i, took.Round(time.Millisecond), bound+waitSlack, o.err)
		}
	}
	if err := <-slept; err != nil {
		t.Fatalf("DEBUG SLEEP: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	s.ids.mu.Lock()
	ids := append([]string(nil), s.ids.issued...)
	s.ids.mu.Unlock()
	if len(ids) < callers {
		t.Fatalf("%d holder ids issued, want at least %d", len(ids), callers)
	}
	for _, id := range ids {
		noTrace(t, e, id, "(a) an acquire that timed out while the server slept, after Close")
	}
}
