package runtime_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/lockgen/lockgen/runtime"
)

func TestReentryPerCallChain(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		l := tg.newLocker(t)
		ctx := ctxTimeout(t, 5*time.Second)
		lock := runtime.Lock{Kind: runtime.Mutex, Key: "re", Lease: time.Second}
		outer, err := l.Acquire(ctx, lock)
		if err != nil {
			t.Fatal(err)
		}
		outerFence, _ := runtime.Fence(outer.Context())
		inner, err := l.Acquire(outer.Context(), runtime.Lock{Kind: runtime.Mutex, Key: "re", Wait: runtime.NoWait})
		if err != nil {
			t.Fatalf("re-entry with the holder's context: %v", err)
		}
		if f, _ := runtime.Fence(inner.Context()); f != outerFence {
			t.Errorf("re-entry fence %d, want the outer hold's %d", f, outerFence)
		}
		// A different call chain (the plain ctx) is another holder.
		if _, err := l.Acquire(ctx, runtime.Lock{Kind: runtime.Mutex, Key: "re", Wait: runtime.NoWait}); !errors.Is(err, runtime.ErrNotAcquired) {
			t.Fatalf("other chain: %v, want ErrNotAcquired", err)
		}
		if err := inner.Release(); err != nil {
			t.Fatal(err)
		}
		// Still held by the outer hold.
		if _, err := l.Acquire(ctx, runtime.Lock{Kind: runtime.Mutex, Key: "re", Wait: runtime.NoWait}); !errors.Is(err, runtime.ErrNotAcquired) {
			t.Fatalf("after inner release: %v, want ErrNotAcquired", err)
		}
		if err := outer.Release(); err != nil {
			t.Fatal(err)
		}
		h, err := l.Acquire(ctx, runtime.Lock{Kind: runtime.Mutex, Key: "re", Wait: runtime.NoWait})
		if err != nil {
			t.Fatalf("after outer release: %v", err)
		}
		h.Release()
	})
}

// Two goroutines re-entering one held context at once: only one may be
// inside through re-entry; the other is a distinct holder and waits.
func TestConcurrentReentryIsExclusive(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		l := tg.newLocker(t)
		ctx := ctxTimeout(t, 5*time.Second)
		outer, err := l.Acquire(ctx, runtime.Lock{Kind: runtime.Mutex, Key: "shared-ctx", Lease: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		first, err := l.Acquire(outer.Context(), runtime.Lock{Kind: runtime.Mutex, Key: "shared-ctx", Wait: runtime.NoWait})
		if err != nil {
			t.Fatalf("first re-entry: %v", err)
		}
		var wg sync.WaitGroup
		wg.Add(1)
		var secondErr error
		go func() {
			defer wg.Done()
			_, secondErr = l.Acquire(outer.Context(), runtime.Lock{Kind: runtime.Mutex, Key: "shared-ctx", Wait: runtime.NoWait})
		}()
		wg.Wait()
		if !errors.Is(secondErr, runtime.ErrNotAcquired) {
			t.Fatalf("concurrent second re-entry: %v, want ErrNotAcquired", secondErr)
		}
		first.Release()
		// The slot is free again for the next nested call.
		again, err := l.Acquire(outer.Context(), runtime.Lock{Kind: runtime.Mutex, Key: "shared-ctx", Wait: runtime.NoWait})
		if err != nil {
			t.Fatalf("re-entry after the first left: %v", err)
		}
		again.Release()
		outer.Release()
	})
}

func TestFenceIncreasesAcrossHolders(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		a, b := tg.newLocker(t), tg.newLocker(t)
		ctx := ctxTimeout(t, 5*time.Second)
		var last int64
		for i := range 20 {
			l := a
			if i%2 == 1 {
				l = b
			}
			h, err := l.Acquire(ctx, runtime.Lock{Kind: runtime.Mutex, Key: "fence"})
			if err != nil {
				t.Fatal(err)
			}
			f, ok := runtime.Fence(h.Context())
			if !ok || f <= last {
				t.Fatalf("round %d: fence %d (ok %v), want > %d", i, f, ok, last)
			}
			if g, ok := runtime.FenceFor(h.Context(), runtime.Mutex, "fence"); !ok || g != f {
				t.Fatalf("FenceFor = %d, %v; want %d", g, ok, f)
			}
			last = f
			if err := h.Release(); err != nil {
				t.Fatal(err)
			}
		}
		if _, ok := runtime.Fence(context.Background()); ok {
			t.Fatal("Fence of a context without locks reported ok")
		}
	})
}

// A lock deleted behind its holder's back: the next renewal is refused and
// the holder's context is cancelled with ErrLockLost, within lease/3 plus a
// round trip, long before its local deadline (the lease) would end it.
func TestDeletedLockCancelsHolder(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		var mu sync.Mutex
		var events []runtime.Event
		l := tg.newLocker(t, runtime.WithObserver(func(e runtime.Event) {
			mu.Lock()
			events = append(events, e)
			mu.Unlock()
		}))
		const lease = 600 * time.Millisecond
		h, err := l.Acquire(ctxTimeout(t, 5*time.Second), runtime.Lock{Kind: runtime.Mutex, Key: "victim", Lease: lease})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tg.do(t, "DEL", "@mutex:{victim}"); err != nil {
			t.Fatal(err)
		}
		deleted := time.Now()
		select {
		case <-h.Context().Done():
		case <-time.After(2 * lease):
			t.Fatal("holder's context not cancelled within 2 leases of the key's deletion")
		}
		took := time.Since(deleted)
		t.Logf("cancelled %v after the deletion (bound lease/3 + round trip = %v + rtt)", took, lease/3)
		// 200ms of slack for a busy machine, still 200ms short of the lease.
		if bound := lease/3 + 200*time.Millisecond; took > bound {
			t.Errorf("cancelled after %v, want within %v", took, bound)
		}
		if cause := context.Cause(h.Context()); !errors.Is(cause, runtime.ErrLockLost) {
			t.Errorf("cause %v, want ErrLockLost", cause)
		}
		err = h.Release()
		if !errors.Is(err, runtime.ErrNotHeld) || !errors.Is(err, runtime.ErrLockLost) {
			t.Errorf("release of a lost lock: %v, want ErrNotHeld and ErrLockLost", err)
		}
		// EventLost is reported right after the holders are told, and a
		// Release of a lost lock returns at once: it may come after it.
		seen := map[runtime.EventKind]bool{}
		for end := time.Now().Add(2 * time.Second); !seen[runtime.EventLost] && time.Now().Before(end); time.Sleep(time.Millisecond) {
			mu.Lock()
			for _, e := range events {
				seen[e.Kind] = true
			}
			mu.Unlock()
		}
		for _, k := range []runtime.EventKind{runtime.EventAcquired, runtime.EventLost, runtime.EventReleased} {
			if !seen[k] {
				t.Errorf("no %v event", k)
			}
		}
	})
}

// The watchdog keeps a lock alive well past its lease.
func TestWatchdogRenews(t *testing.T) {
	t.Parallel()
	forEachTarget(t, func(t *testing.T, tg target) {
		renewed := make(chan struct{}, 100)
		l := tg.newLocker(t, runtime.WithObserver(func(e runtime.Event) {
			if e.Kind == runtime.EventRenewed {
				select {
				case renewed <- struct{}{}:
				default:
				}
			}
		}))
		other := tg.newLocker(t)
		// Renewed every 100ms: a renewal may take up to about 200ms on a
		// busy machine before the lock is lost.
		const lease = 300 * time.Millisecond
		h, err := l.Acquire(ctxTimeout(t, 5*time.Second), runtime.Lock{Kind: runtime.Mutex, Key: "kept", Lease: lease})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(4 * lease) // the fault: four leases pass, and only renewals keep the lock
		if err := h.Context().Err(); err != nil {
			t.Fatalf("holder's context ended: %v (%v)", err, context.Cause(h.Context()))
		}
		if _, err := other.Acquire(context.Background(), runtime.Lock{Kind: runtime.Mutex, Key: "kept", Wait: runtime.NoWait}); !errors.Is(err, runtime.ErrNotAcquired) {
			t.Fatalf("another holder after 4 leases: %v, want ErrNotAcquired", err)
		}
		if n := len(renewed); n < 4 {
			t.Errorf("%d renewals in 4 leases, want >= 4", n)
		}
		if err := h.Release(); err != nil {
			t.Fatal(err)
		}
	})
}

// With NoRenew the holder's context ends inside the lease.
func TestNoRenewDeadlineInsideLease(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		l := tg.newLocker(t)
		const lease = 200 * time.Millisecond
		start := time.Now()
		h, err := l.Acquire(context.Background(), runtime.Lock{Kind: runtime.Mutex, Key: "norenew", Lease: lease, NoRenew: true})
		if err != nil {
			t.Fatal(err)
		}
		dl, ok := h.Context().Deadline()
		if !ok || !dl.Before(start.Add(lease)) {
			t.Fatalf("deadline %v (ok %v), want before %v", dl, ok, start.Add(lease))
		}
		<-h.Context().Done()
		if !errors.Is(context.Cause(h.Context()), runtime.ErrLockLost) {
			t.Errorf("cause %v, want ErrLockLost", context.Cause(h.Context()))
		}
		h.Release()
	})
}
