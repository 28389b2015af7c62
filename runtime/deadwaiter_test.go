package runtime_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/runtime"
)

// A registered waiter that never claims its offer (its process froze or
// died) holds the lock up for one offer, whatever its waiter window: a
// waiter of another process registered behind it sees the offer go by
// with no "taken" after it, tries once the offer has lapsed, and takes
// the lock with the fence after the offer's, within seconds, though the
// frozen waiter's window is a minute and the lease 30 s. (Under protocol
// 1 a registration lived for its window, capped by the lease, and so did
// a lock handed over to it: what protocol 1's test of that cap guarded.)
func TestDeadWaiterCostsAnOfferWhateverItsWindow(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		lock := runtime.Lock{Kind: runtime.Mutex, Key: "dead-waiter", Lease: 30 * time.Second}
		ctx := ctxTimeout(t, 60*time.Second)
		holder := tg.newLocker(t)
		first, err := holder.Acquire(ctx, lock)
		if err != nil {
			t.Fatal(err)
		}
		firstFence, _ := runtime.Fence(first.Context())

		// Registered at the same fence, the waiters are offered the lock
		// in the order of their holder ids: the frozen one first.
		frozen := &freezingBackend{arrived: make(chan struct{}, 1)}
		observeDead, busyDead := busySignal()
		dead := tg.newLockerVia(t, func(b backend.Backend) backend.Backend {
			frozen.Backend = b
			return frozen
		}, runtime.WithObserver(observeDead), runtime.WithWaiterWindow(time.Minute), holderIDs("a-dead"))
		deadGot := acquireAsync(ctx, dead, lock)
		waitBusy(t, busyDead, 2) // registered, and subscribed
		observeLive, busyLive := busySignal()
		live := tg.newLocker(t, runtime.WithObserver(observeLive), holderIDs("b-live"))
		liveGot := acquireAsync(ctx, live, lock)
		waitBusy(t, busyLive, 2)

		frozen.freeze()
		released := time.Now()
		if err := first.Release(); err != nil {
			t.Fatal(err) // offers the lock to the frozen waiter
		}
		var a acquired
		select {
		case a = <-liveGot:
		case <-time.After(10 * time.Second):
			frozen.thaw()()
			t.Fatal("the live waiter got no lock within 10s of an offer to a frozen waiter (window 1 min, lease 30s)")
		}
		if a.err != nil {
			frozen.thaw()()
			t.Fatalf("the live waiter: %v", a.err)
		}
		t.Logf("the live waiter was granted %v after the release", a.at.Sub(released))
		if fence, _ := runtime.Fence(a.h.Context()); fence != firstFence+2 {
			t.Errorf("the live waiter's fence %d, want %d: the one after the frozen waiter's offer (%d)", fence, firstFence+2, firstFence+1)
		}

		frozen.thaw()() // the frozen waiter claims its old offer: busy
		if err := a.h.Release(); err != nil {
			t.Fatal(err)
		}
		releaseGranted(t, deadGot, nil) // the thawed waiter, once the lock is free
	})
}

// holderIDs gives a Locker holder ids that start with prefix.
func holderIDs(prefix string) runtime.Option {
	var n atomic.Int64
	return runtime.WithHolderIDs(func() string { return fmt.Sprintf("%s:%d", prefix, n.Add(1)) })
}
