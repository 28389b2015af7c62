package backendtest

import (
	"context"
	"errors"
	"time"

	"github.com/lockgen/lockgen/runtime"
)

// loss: the lock's keys are deleted on every server behind its holder's
// back. The next renewal (RenewNow, so that nothing waits for the
// watchdog) cancels the holder's context with ErrLockLost, Release reports
// ErrNotHeld and ErrLockLost, and the lock is free for another Locker.
func loss(e *env, kind runtime.Kind) {
	t := e.t
	holder, other := e.locker(), e.locker()
	ctx := e.ctx(30 * time.Second)
	h, err := holder.Acquire(ctx, lockOf(kind, "lost", longLease))
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.RenewNow(ctx); err != nil || h.Context().Err() != nil {
		t.Fatalf("RenewNow while held: %v; holder's context %v", err, h.Context().Err())
	}
	e.deleteLock(kind, "lost")
	if err := holder.RenewNow(ctx); err != nil {
		t.Fatalf("RenewNow after the deletion: %v", err)
	}
	select {
	case <-h.Context().Done():
	case <-time.After(10 * time.Second):
		t.Fatal("holder's context not cancelled within 10s of RenewNow after its keys were deleted")
	}
	if cause := context.Cause(h.Context()); !errors.Is(cause, runtime.ErrLockLost) {
		t.Errorf("holder's context cause %v, want ErrLockLost", cause)
	}
	if err := h.Release(); !errors.Is(err, runtime.ErrNotHeld) || !errors.Is(err, runtime.ErrLockLost) {
		t.Errorf("release of a lost lock: %v, want ErrNotHeld and ErrLockLost", err)
	}
	h2, err := other.Acquire(ctx, noWait(lockOf(kind, "lost", longLease)))
	if err != nil {
		t.Fatalf("another Locker after the loss: %v", err)
	}
	if err := h2.Release(); err != nil {
		t.Fatal(err)
	}
	e.checkClean(kind, "lost")
}
