package backendtest

import (
	"time"

	"github.com/lockgen/lockgen/runtime"
)

// blockerOf is the lock that keeps a waiter of kind out: a writer keeps a
// reader out, a full semaphore (both permits held) the next holder.
func blockerOf(kind runtime.Kind, key string, lease time.Duration) runtime.Lock {
	l := lockOf(kind, key, lease)
	if kind == runtime.Read {
		l.Kind = runtime.Write
	}
	return l
}

// asleep waits for a waiter's second busy reply: the first attempt, then
// the one after it subscribed to the wake channel. After that it sleeps
// until a message or its lease-based retry wakes it.
func (e *env) asleep(busy <-chan struct{}) {
	e.t.Helper()
	WaitBusy(e.t, busy, 2)
}

// wakeUp: a waiter on another Locker, asleep behind a holder with a
// two-minute lease, gets the lock within 10s of the release (it takes
// milliseconds; the slack is for a busy machine): only the release's wake
// message can let it in that soon. Its fence is above the holder's for
// exclusive kinds.
func wakeUp(e *env, kind runtime.Kind) {
	t := e.t
	observe, busy := BusySignal()
	holder, waiter := e.locker(), e.locker(observe)
	ctx := e.ctx(60 * time.Second)
	var held []*runtime.Held
	for range capacity(blockerOf(kind, "", 0).Kind) {
		h, err := holder.Acquire(ctx, noWait(blockerOf(kind, "wake", longLease)))
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, h)
	}
	first, _ := runtime.Fence(held[0].Context())
	got := AcquireAsync(ctx, waiter, lockOf(kind, "wake", longLease))
	e.asleep(busy)
	released := time.Now()
	if err := held[0].Release(); err != nil {
		t.Fatal(err)
	}
	select {
	case a := <-got:
		if a.Err != nil {
			t.Fatalf("waiter: %v", a.Err)
		}
		t.Logf("woken %v after the release", time.Since(released))
		if fence, _ := runtime.Fence(a.Held.Context()); exclusive(kind) && fence <= first {
			t.Errorf("waiter's fence %d not above the holder's %d", fence, first)
		}
		held = append(held[1:], a.Held)
	case <-time.After(10 * time.Second):
		t.Fatalf("waiter not woken within 10s of the release (lease %v)", longLease)
	}
	for _, h := range held {
		if err := h.Release(); err != nil {
			t.Fatal(err)
		}
	}
	e.checkClean(kind, "wake")
}
