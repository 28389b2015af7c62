package runtime_test

import (
	"testing"
	"time"

	"github.com/lockgen/lockgen/lua"
	"github.com/lockgen/lockgen/runtime"
)

// A waiter offered the lock by another process's release (here another
// Locker's) soon after it first registered counts the offer held from the
// wake message: every offer to its holder id was made after that
// registration was sent, and lives the offer's lease from then. It returns
// before its claim reaches Redis and makes no acquire call for it; the
// claim goes as its first renewal and gives it the full lease.
//
// A run tells anything only if the waiter returned within half an offer of
// starting its Acquire (a slow machine may take longer, and then rightly
// claims first): one that did not is tried again, 5 times at most.
func TestOfferMessageSoonAfterRegisteringIsHeldBeforeItsClaim(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		playInTime(t, "message-offer", func(lock runtime.Lock) bool {
			return messageOfferHeld(t, tg, lock)
		})
	})
}

// messageOfferHeld plays one run of
// TestOfferMessageSoonAfterRegisteringIsHeldBeforeItsClaim and reports
// whether it could tell anything.
func messageOfferHeld(t *testing.T, tg target, lock runtime.Lock) (told bool) {
	ctx := ctxTimeout(t, 30*time.Second)
	h, gate, firstFence := gatedHandOver(t, ctx, tg, lock, &batchGate{otherReleaser: true})
	returned := time.Since(gate.waiterStarted)
	defer h.Release()
	gate.mu.Lock()
	calls := gate.calls
	gate.mu.Unlock()
	if calls != 0 {
		gate.open()
		if returned >= lua.MutexOffer/2 {
			t.Logf("the waiter returned %v after it started, past half an offer, and claimed first (%d acquire calls); trying again", returned, calls)
			return false
		}
		t.Fatalf("the waiter made %d acquire calls between the release and its return, %v after it started; want none: an offer made within half an offer of its first registration is its own until the offer's lease ends", calls, returned)
	}
	if fence, _ := runtime.Fence(h.Context()); fence != firstFence+1 {
		t.Errorf("fence %d, want the offer's %d", fence, firstFence+1)
	}
	awaitClosedOrSignal(t, gate.held, "the claim")
	margin := time.Until(gate.waiterStarted.Add(lua.MutexOffer - lua.MutexOffer/100 - 2*time.Millisecond))
	gate.open()
	return claimKeptTheLock(t, ctx, tg, lock, h, margin)
}
