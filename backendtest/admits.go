package backendtest

import (
	"errors"
	"time"

	"github.com/lockgen/lockgen/runtime"
)

// admits: holders taken in turn from two Lockers, up to the kind's
// capacity, then one more that must be refused (readers: a writer, which
// readers keep out); after the releases the lock is free, and a second
// Release of a hold is ErrNotHeld.
func admits(e *env, kind runtime.Kind) {
	t := e.t
	lockers := []*runtime.Locker{e.locker(), e.locker()}
	ctx := e.ctx(20 * time.Second)
	lock := noWait(lockOf(kind, "admits", 0))
	var held []*runtime.Held
	for i := range capacity(kind) {
		h, err := lockers[i%2].Acquire(ctx, lock)
		if err != nil {
			t.Fatalf("holder %d of %d: %v", i+1, capacity(kind), err)
		}
		if fence, ok := runtime.Fence(h.Context()); !ok || fence <= 0 {
			t.Fatalf("holder %d: fence %d, %v", i+1, fence, ok)
		}
		held = append(held, h)
	}
	// The suite's own premise: it sees the keys of a held lock, so that
	// finding none after the release means something.
	if len(e.leftovers(kind, "admits")) == 0 {
		t.Fatalf("no key of the held %v lock found on the servers: the suite's key names or Servers do not fit this target", kind)
	}
	extra := lock
	if kind == runtime.Read {
		extra.Kind = runtime.Write
	}
	if _, err := lockers[1].Acquire(ctx, extra); !errors.Is(err, runtime.ErrNotAcquired) {
		t.Fatalf("%v beyond %d holders of %v: %v, want ErrNotAcquired", extra.Kind, len(held), kind, err)
	}
	for i, h := range held {
		if err := h.Release(); err != nil {
			t.Fatalf("release of holder %d: %v", i+1, err)
		}
	}
	h, err := lockers[1].Acquire(ctx, extra)
	if err != nil {
		t.Fatalf("%v after every holder released: %v", extra.Kind, err)
	}
	if err := h.Release(); err != nil {
		t.Fatal(err)
	}
	if err := h.Release(); !errors.Is(err, runtime.ErrNotHeld) {
		t.Fatalf("second release: %v, want ErrNotHeld", err)
	}
	e.checkClean(kind, "admits")
}
