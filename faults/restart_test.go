package faults

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockgen/lockgen/runtime"
)

// The server is killed (SIGKILL) while a lock is held and a waiter waits,
// and restarted on the same port, empty (no persistence). What still has
// to hold:
//
//   - (d) a wait=1s caller during the outage returns within 1.5 s, with an
//     error, and leaves nothing behind once the server is back (a);
//   - the waiter gets the now free lock soon after the restart (its Pub/Sub
//     connection comes back and wakes it), not when its retry timer fires;
//   - the old holder's context is cancelled with ErrLockLost, and its
//     Release does not return nil: the lock it held is gone (b).
//
// An empty server can grant the lock to the waiter before the old holder
// hears that its lock is gone: without persistence a restart loses locks,
// which only fencing tokens can make safe. The overlap is printed, not
// asserted.
func TestServerKilledAndRestarted(t *testing.T) {
	t.Parallel()
	const lease = 10 * time.Second
	e := newEnv(t)
	lock := runtime.Lock{Kind: runtime.Mutex, Key: "restart", Lease: lease}
	holder := e.locker(e.client(e.srv.Addr, nil), "rh")
	h := acquire(ctxFor(t, 10*time.Second), holder, lock)
	if h.err != nil {
		t.Fatal(h.err)
	}
	lost := make(chan time.Time, 1)
	context.AfterFunc(h.held.Context(), func() { lost <- time.Now() })
	waiter := e.locker(e.client(e.srv.Addr, nil), "rw")
	wch := acquireAsync(ctxFor(t, time.Minute), waiter, lock)
	waiter.ev.wait(t, runtime.EventBusy, "", 10*time.Second)

	e.srv.Kill()
	killed := time.Now()
	during := e.locker(e.client(e.srv.Addr, nil), "rd")
	dLock := lock
	dLock.Wait = time.Second
	d := acquire(ctxFor(t, 20*time.Second), during, dLock)
	t.Logf("(d) wait=1s acquire while the server is down: returned after %v: %v", d.took().Round(time.Millisecond), d.err)
	if d.took() > dLock.Wait+waitSlack {
		t.Errorf("(d) wait=1s acquire while the server is down returned after %v; want within %v", d.took().Round(time.Millisecond), dLock.Wait+waitSlack)
	}
	if err := e.srv.Restart(); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()

	w := await(t, wch, 2*lease, "the waiter")
	if w.err != nil {
		t.Fatalf("the waiter after the restart: %v", w.err)
	}
	var lostAt time.Time
	select {
	case lostAt = <-lost:
	case <-time.After(lease):
		t.Fatalf("the old holder's context was not cancelled within %v of the restart", lease)
	}
	t.Logf("restart: server down %v; waiter granted %v after the restart; old holder told %v after the restart (%v after the waiter's grant)",
		restarted.Sub(killed).Round(time.Millisecond), w.returned.Sub(restarted).Round(time.Millisecond),
		lostAt.Sub(restarted).Round(time.Millisecond), lostAt.Sub(w.returned).Round(time.Millisecond))
	if dt := w.returned.Sub(restarted); dt > 3*time.Second {
		t.Errorf("the waiter got the free lock %v after the restart; want within 3s (woken by its Pub/Sub reconnection)", dt.Round(time.Millisecond))
	}
	if cause := context.Cause(h.held.Context()); !errors.Is(cause, runtime.ErrLockLost) {
		t.Errorf("old holder's context cause %v; want ErrLockLost", cause)
	}
	if rerr := h.held.Release(); !errors.Is(rerr, runtime.ErrNotHeld) {
		t.Errorf("(b) the old holder's Release after the restart returned %v; want ErrNotHeld: its lock was lost", rerr)
	}
	rerr := w.held.Release()
	if rerr != nil {
		t.Errorf("the waiter's release: %v", rerr)
	}
	checkGone(t, e, w.holder, rerr)
	if d.err == nil {
		t.Fatalf("acquire while the server was down succeeded")
	}
	checkFailedAcquire(t, e, during, d, "acquire while the server was down")
}
