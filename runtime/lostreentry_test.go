package runtime_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockgen/lockgen/runtime"
)

// A hold the watchdog has declared lost cannot be re-entered: the nested
// Acquire fails with ErrLockLost, also with a context that kept the
// chain's values but not its cancellation, and sends nothing. A re-entry
// taken before the loss does not release as if nothing happened.
func TestReenteringALostHoldFails(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		l := tg.newLocker(t)
		const lease = 600 * time.Millisecond
		lock := runtime.Lock{Kind: runtime.Mutex, Key: "lost-re", Lease: lease}
		outer, err := l.Acquire(ctxTimeout(t, 5*time.Second), lock)
		if err != nil {
			t.Fatal(err)
		}
		before, err := l.Acquire(outer.Context(), lock)
		if err != nil {
			t.Fatalf("re-entry before the loss: %v", err)
		}
		if _, err := tg.do(t, "DEL", "@mutex:{lost-re}"); err != nil {
			t.Fatal(err)
		}
		select {
		case <-outer.Context().Done():
		case <-time.After(5 * lease):
			t.Fatal("the holder was not told of the loss")
		}
		for name, ctx := range map[string]context.Context{
			"the holder's context":              outer.Context(),
			"its values without cancellation":   context.WithoutCancel(outer.Context()),
			"a context derived from the holder": context.WithValue(outer.Context(), struct{}{}, 1),
		} {
			h, err := l.Acquire(ctx, lock)
			if err == nil {
				f, _ := runtime.Fence(h.Context())
				t.Errorf("re-entry with %s after the loss succeeded (fence %d), want ErrLockLost", name, f)
				h.Release()
				continue
			}
			if !errors.Is(err, runtime.ErrLockLost) {
				t.Errorf("re-entry with %s after the loss: %v, want ErrLockLost", name, err)
			}
		}
		if err := before.Release(); !errors.Is(err, runtime.ErrLockLost) {
			t.Errorf("release of a re-entry taken before the loss: %v, want ErrLockLost", err)
		}
		if err := outer.Release(); !errors.Is(err, runtime.ErrLockLost) {
			t.Errorf("release of the lost hold: %v, want ErrLockLost", err)
		}
	})
}

// A renew=false hold past its deadline has ended: a nested Acquire with
// its context fails with ErrLockLost rather than re-enter it.
func TestReenteringAnEndedNoRenewHoldFails(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		l := tg.newLocker(t)
		const lease = 300 * time.Millisecond
		lock := runtime.Lock{Kind: runtime.Mutex, Key: "ended-re", Lease: lease, NoRenew: true}
		outer, err := l.Acquire(ctxTimeout(t, 5*time.Second), lock)
		if err != nil {
			t.Fatal(err)
		}
		select {
		case <-outer.Context().Done():
		case <-time.After(5 * lease):
			t.Fatal("the renew=false hold's context did not end")
		}
		for name, ctx := range map[string]context.Context{
			"the holder's context":            outer.Context(),
			"its values without cancellation": context.WithoutCancel(outer.Context()),
		} {
			h, err := l.Acquire(ctx, lock)
			if err == nil {
				t.Errorf("re-entry with %s of an ended renew=false hold succeeded, want ErrLockLost", name)
				h.Release()
				continue
			}
			if !errors.Is(err, runtime.ErrLockLost) {
				t.Errorf("re-entry with %s of an ended renew=false hold: %v, want ErrLockLost", name, err)
			}
		}
		outer.Release()
	})
}
