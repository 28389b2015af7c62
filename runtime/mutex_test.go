package runtime_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockgen/lockgen/runtime"
)

func TestMutexExcludesAndReleases(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		a, b := tg.newLocker(t), tg.newLocker(t)
		ctx := ctxTimeout(t, 5*time.Second)
		lock := runtime.Lock{Kind: runtime.Mutex, Key: "order:1", Lease: time.Second}

		h, err := a.Acquire(ctx, lock)
		if err != nil {
			t.Fatalf("first acquire: %v", err)
		}
		try := lock
		try.Wait = runtime.NoWait
		if _, err := b.Acquire(ctx, try); !errors.Is(err, runtime.ErrNotAcquired) {
			t.Fatalf("second holder got %v, want ErrNotAcquired", err)
		}
		if err := h.Release(); err != nil {
			t.Fatalf("release: %v", err)
		}
		h2, err := b.Acquire(ctx, try)
		if err != nil {
			t.Fatalf("acquire after release: %v", err)
		}
		if err := h2.Release(); err != nil {
			t.Fatalf("release: %v", err)
		}
	})
}

func TestWaiterIsWokenByRelease(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		observe, busy := busySignal()
		// A long lease, and a long waiter window (a mutex waiter renews its
		// registration every window/3): only a wake message can let the
		// waiter in quickly.
		a, b := tg.newLocker(t), tg.newLocker(t, runtime.WithObserver(observe), runtime.WithWaiterWindow(30*time.Second))
		ctx := ctxTimeout(t, 5*time.Second)
		lock := runtime.Lock{Kind: runtime.Mutex, Key: "wake", Lease: 20 * time.Second}
		h, err := a.Acquire(ctx, lock)
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan error, 1)
		go func() {
			h2, err := b.Acquire(ctx, lock)
			if err == nil {
				err = h2.Release()
			}
			got <- err
		}()
		waitBusy(t, busy, 2) // attempt, subscribe, attempt: it sleeps
		released := time.Now()
		if err := h.Release(); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-got:
			if err != nil {
				t.Fatalf("waiter: %v", err)
			}
			t.Logf("handoff took %v", time.Since(released))
		case <-time.After(2 * time.Second):
			t.Fatal("waiter not woken within 2s of the release (lease 20s, registration renewed every 10s)")
		}
	})
}

func TestDoubleReleaseIsErrNotHeld(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		l := tg.newLocker(t)
		h, err := l.Acquire(context.Background(), runtime.Lock{Kind: runtime.Mutex, Key: "twice"})
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Release(); err != nil {
			t.Fatal(err)
		}
		if err := h.Release(); !errors.Is(err, runtime.ErrNotHeld) {
			t.Fatalf("second release: %v, want ErrNotHeld", err)
		}
		var nilHeld *runtime.Held
		if err := nilHeld.Release(); !errors.Is(err, runtime.ErrNotHeld) {
			t.Fatalf("nil release: %v, want ErrNotHeld", err)
		}
	})
}
