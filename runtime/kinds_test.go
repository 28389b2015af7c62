package runtime_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/lockgen/lockgen/runtime"
)

// Fair locks are granted in arrival order.
func TestFairGrantsInArrivalOrder(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		queued := make(chan string, 16)
		l := tg.newLocker(t, runtime.WithObserver(func(e runtime.Event) {
			if e.Kind == runtime.EventBusy {
				select {
				case queued <- e.Holder:
				default:
				}
			}
		}))
		ctx := ctxTimeout(t, 10*time.Second)
		lock := runtime.Lock{Kind: runtime.Fair, Key: "fifo", Lease: 5 * time.Second}
		h, err := l.Acquire(ctx, lock)
		if err != nil {
			t.Fatal(err)
		}
		const waiters = 5
		seen := map[string]bool{}
		var mu sync.Mutex
		var order []int
		var wg sync.WaitGroup
		for i := range waiters {
			wg.Add(1)
			go func() {
				defer wg.Done()
				h, err := l.Acquire(ctx, lock)
				if err != nil {
					t.Errorf("waiter %d: %v", i, err)
					return
				}
				mu.Lock()
				order = append(order, i)
				mu.Unlock()
				h.Release()
			}()
			// Wait until waiter i is in the queue (its first busy reply)
			// before starting the next.
			for newHolder := false; !newHolder; {
				select {
				case h := <-queued:
					newHolder = !seen[h]
					seen[h] = true
				case <-ctx.Done():
					t.Fatal("waiter never queued")
				}
			}
		}
		h.Release()
		wg.Wait()
		for i, w := range order {
			if i != w {
				t.Fatalf("grant order %v, want arrival order", order)
			}
		}
		if len(order) != waiters {
			t.Fatalf("%d grants, want %d", len(order), waiters)
		}
	})
}

// A fair waiter that gives up leaves the queue at once: the one behind it
// does not wait for its place to expire.
func TestFairLeaveOnGiveUp(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		observe, busy := busySignal()
		l := tg.newLocker(t, runtime.WithObserver(observe))
		ctx := ctxTimeout(t, 10*time.Second)
		lock := runtime.Lock{Kind: runtime.Fair, Key: "leave", Lease: 20 * time.Second}
		h, err := l.Acquire(ctx, lock)
		if err != nil {
			t.Fatal(err)
		}
		quitter := lock
		quitter.Wait = 50 * time.Millisecond
		if _, err := l.Acquire(ctx, quitter); !errors.Is(err, runtime.ErrNotAcquired) {
			t.Fatalf("quitter: %v, want ErrNotAcquired", err)
		}
		drain(busy)
		// Cancelled once queued (its first busy reply).
		cctx, cancel := context.WithCancel(ctx)
		cancelled := acquireAsync(cctx, l, lock)
		waitBusy(t, busy, 1)
		cancel()
		if a := <-cancelled; !errors.Is(a.err, context.Canceled) {
			t.Fatalf("cancelled waiter: %v, want Canceled", a.err)
		}
		drain(busy)
		got := acquireAsync(ctx, l, lock)
		waitBusy(t, busy, 1) // queued behind whatever the others left
		h.Release()
		select {
		case a := <-got:
			if a.err != nil {
				t.Fatal(a.err)
			}
			a.h.Release()
		case <-time.After(3 * time.Second):
			t.Fatal("the waiter behind the ones that gave up waited more than 3s (lease 20s)")
		}
	})
}

func TestReadWrite(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		a, b := tg.newLocker(t), tg.newLocker(t)
		ctx := ctxTimeout(t, 10*time.Second)
		read := runtime.Lock{Kind: runtime.Read, Key: "doc", Wait: runtime.NoWait}
		write := runtime.Lock{Kind: runtime.Write, Key: "doc", Wait: runtime.NoWait}
		// A busy writer holds new readers back (writer preference) only while
		// it waits: one that gives up withdraws its claim at once, so these
		// probes keep the default 30s lease.
		writeProbe := write

		r1, err := a.Acquire(ctx, read)
		if err != nil {
			t.Fatal(err)
		}
		r2, err := b.Acquire(ctx, read)
		if err != nil {
			t.Fatalf("readers share: %v", err)
		}
		if _, err := b.Acquire(ctx, writeProbe); !errors.Is(err, runtime.ErrNotAcquired) {
			t.Fatalf("writer while read: %v, want ErrNotAcquired", err)
		}
		r3, err := b.Acquire(ctx, read)
		if err != nil {
			t.Fatalf("a reader after a writer gave up: %v (the writer's claim outlived its wait)", err)
		}
		r3.Release()
		if _, err := a.Acquire(r1.Context(), write); !errors.Is(err, runtime.ErrInvalidLock) {
			t.Fatalf("upgrade read to write: %v, want ErrInvalidLock", err)
		}
		r1.Release()
		r2.Release()

		w, err := a.Acquire(ctx, runtime.Lock{Kind: runtime.Write, Key: "doc", Wait: time.Second})
		if err != nil {
			t.Fatalf("writer after readers left: %v", err)
		}
		if _, err := b.Acquire(ctx, read); !errors.Is(err, runtime.ErrNotAcquired) {
			t.Fatalf("reader while written: %v, want ErrNotAcquired", err)
		}
		if _, err := b.Acquire(ctx, writeProbe); !errors.Is(err, runtime.ErrNotAcquired) {
			t.Fatalf("second writer: %v, want ErrNotAcquired", err)
		}
		wr, err := a.Acquire(w.Context(), read)
		if err != nil {
			t.Fatalf("writer takes the read side: %v", err)
		}
		w2, err := a.Acquire(wr.Context(), write)
		if err != nil {
			t.Fatalf("writer re-enters write: %v", err)
		}
		for _, h := range []*runtime.Held{w2, wr, w} {
			if err := h.Release(); err != nil {
				t.Fatal(err)
			}
		}
		h, err := b.Acquire(ctx, runtime.Lock{Kind: runtime.Read, Key: "doc", Wait: time.Second})
		if err != nil {
			t.Fatalf("reader after writer left: %v", err)
		}
		h.Release()
	})
}
