package backendtest

import (
	"context"
	"errors"
	"time"

	"github.com/lockgen/lockgen/runtime"
)

// closeStops: Close of a waiter's Locker stops its Acquire with ErrClosed
// (and withdraws what it registered); Close of a holder's Locker cancels
// the held context with ErrLockLost and ErrClosed, refuses new acquires
// with ErrClosed, and leaves the hold releasable. Close twice is nil.
// Afterwards the lock keeps nothing but its floor.
func closeStops(e *env, kind runtime.Kind) {
	t := e.t
	observe, busy := BusySignal()
	holder, waiter := e.locker(), e.locker(observe)
	ctx := e.ctx(60 * time.Second)
	h, err := holder.Acquire(ctx, blockerOf(kind, "closed", longLease))
	if err != nil {
		t.Fatal(err)
	}
	var more []*runtime.Held // a semaphore's second permit
	for range capacity(blockerOf(kind, "", 0).Kind) - 1 {
		h2, err := holder.Acquire(ctx, noWait(blockerOf(kind, "closed", longLease)))
		if err != nil {
			t.Fatal(err)
		}
		more = append(more, h2)
	}
	got := AcquireAsync(ctx, waiter, lockOf(kind, "closed", longLease))
	e.asleep(busy)
	if err := waiter.Close(); err != nil {
		t.Fatalf("waiter's Close: %v", err)
	}
	select {
	case a := <-got:
		if !errors.Is(a.Err, runtime.ErrClosed) {
			t.Fatalf("waiting Acquire after Close: %v, want ErrClosed", a.Err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("waiting Acquire not stopped within 10s of Close")
	}
	closeHolder(e, holder, append(more, h), kind)
	e.checkClean(kind, "closed")
}

// closeHolder closes the Locker of held and checks what its holders and
// callers see.
func closeHolder(e *env, holder *runtime.Locker, held []*runtime.Held, kind runtime.Kind) {
	t := e.t
	if err := holder.Close(); err != nil {
		t.Fatalf("holder's Close: %v", err)
	}
	for _, h := range held {
		select {
		case <-h.Context().Done():
			cause := context.Cause(h.Context())
			if !errors.Is(cause, runtime.ErrLockLost) || !errors.Is(cause, runtime.ErrClosed) {
				t.Errorf("held context's cause %v, want ErrLockLost and ErrClosed", cause)
			}
		default:
			t.Error("held context not cancelled by Close")
		}
		if err := h.Release(); err != nil {
			t.Errorf("Release after Close: %v", err)
		}
	}
	if _, err := holder.Acquire(context.Background(), noWait(lockOf(kind, "other", 0))); !errors.Is(err, runtime.ErrClosed) {
		t.Errorf("Acquire after Close: %v, want ErrClosed", err)
	}
	if err := holder.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}
