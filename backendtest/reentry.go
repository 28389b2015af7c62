package backendtest

import (
	"errors"
	"time"

	"github.com/lockgen/lockgen/runtime"
)

// reentry: a hold's context re-enters its lock with the same fence and no
// wait; another call chain of the same Locker is another holder and is
// refused; the lock stays held until the outer hold is released too, and
// is free after. Re-entry is the Locker's, not the backend's, but a backend
// that lost a hold's fence or holder id would break it.
func reentry(e *env, kind runtime.Kind) {
	t := e.t
	l := e.locker()
	ctx := e.ctx(20 * time.Second)
	lock := lockOf(kind, "reentry", 0)
	outer, err := l.Acquire(ctx, lock)
	if err != nil {
		t.Fatal(err)
	}
	inner, err := l.Acquire(outer.Context(), noWait(lock))
	if err != nil {
		t.Fatalf("re-entry: %v", err)
	}
	f1, _ := runtime.Fence(outer.Context())
	f2, _ := runtime.Fence(inner.Context())
	if f1 != f2 || f1 <= 0 {
		t.Errorf("re-entry fence %d, want the outer hold's %d", f2, f1)
	}
	blocked := lock
	if !exclusive(kind) {
		blocked.Kind = runtime.Write // a writer waits for every reader or permit holder to leave
		if kind == runtime.Semaphore {
			blocked = lockOf(kind, "reentry", 0)
			blocked.Permits = 1 // only the one permit held: the other chain is over it
		}
	}
	if _, err := l.Acquire(ctx, noWait(blocked)); !errors.Is(err, runtime.ErrNotAcquired) {
		t.Fatalf("another call chain of the same Locker: %v, want ErrNotAcquired", err)
	}
	if err := inner.Release(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Acquire(ctx, noWait(blocked)); !errors.Is(err, runtime.ErrNotAcquired) {
		t.Fatalf("after the inner release the outer hold must remain: %v", err)
	}
	if err := outer.Release(); err != nil {
		t.Fatal(err)
	}
	h, err := l.Acquire(ctx, noWait(blocked))
	if err != nil {
		t.Fatalf("after both releases: %v", err)
	}
	if err := h.Release(); err != nil {
		t.Fatal(err)
	}
	e.checkClean(kind, "reentry")
}
