package runtime_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockgen/lockgen/runtime"
)

// Invariant 6 on a real server (docs/design.md): a process whose
// goroutines hand a mutex to each other as fast as they can (Locker A;
// every release offers the lock to A's own next waiter while it may)
// keeps it among them for at most 3 hand-overs in a row while a waiter of
// another process (Locker B, holder ids of its own) is registered. B's
// waiter is granted while A still has waiters queued, after a handful of
// A's holds, and long before the 30 s lease would let it try on its own:
// without the bound A never runs out of waiters, and B waits for ever.
func TestOtherProcessIsGrantedWithinTheNearHandOvers(t *testing.T) {
	const goroutines = 4
	prefix := uniquePrefix(t)
	lock := runtime.Lock{Kind: runtime.Mutex, Key: "near-bound", Lease: 30 * time.Second}
	ctx := ctxTimeout(t, 60*time.Second)
	a := runtime.New(redisClient(t), runtime.WithKeyPrefix(prefix), holderIDs("procA"))
	t.Cleanup(func() { a.Close() })

	var holds atomic.Int64       // A's holds so far
	var holdsAtBusy atomic.Int64 // A's holds at B's first busy reply (registered), -1 before
	holdsAtBusy.Store(-1)
	observe := func(e runtime.Event) {
		if e.Kind == runtime.EventBusy {
			holdsAtBusy.CompareAndSwap(-1, holds.Load())
		}
	}
	b := runtime.New(redisClient(t), runtime.WithKeyPrefix(prefix), runtime.WithObserver(observe), holderIDs("procB"))
	t.Cleanup(func() { b.Close() })

	warm, errs, stop := handAround(ctx, a, lock, goroutines, &holds)
	defer stop()
	select {
	case <-warm: // A's goroutines hand the lock around
	case err := <-errs:
		t.Fatal(err)
	case <-time.After(10 * time.Second):
		t.Fatalf("A's %d goroutines made %d holds in 10s", goroutines, holds.Load())
	}

	// B asks again and again: after each of B's holds, A's waiter that
	// B's release offers the lock to starts a new run of near hand-overs.
	// A round in which B found the lock free (all of A's goroutines
	// between a release and their next acquire, which a loaded machine
	// can make happen) bounds nothing and is not counted; most rounds
	// find it held, and 20 must.
	worst := int64(0)
	for round, counted := 0, 0; counted < 20; round++ {
		if round == 60 {
			t.Fatalf("in %d rounds, B found A's goroutines holding the lock only %d times", round, counted)
		}
		holdsAtBusy.Store(-1)
		between, queued, busy := grantedWhileQueued(t, a, b, lock, &holds, &holdsAtBusy, round)
		if !busy {
			t.Logf("round %d: B was granted without a busy reply: A's goroutines were not holding the lock", round)
			continue
		}
		counted++
		worst = max(worst, between)
		if queued < 1 {
			t.Errorf("round %d: A had no waiter queued when B was granted: the bound was not what let B in", round)
		}
		// The hold under way, 3 near hand-overs, A's own registration
		// ahead of B's (5; measured: 4), and once more 3 and the one
		// that took an offer to B that lapsed (B's claim came late under
		// load), and 1 for the counting. Without the bound A makes
		// thousands, and B is never granted.
		if limit := int64(10); between > limit {
			t.Errorf("round %d: A made %d holds between B's registration and B's grant; want at most %d", round, between, limit)
		}
	}
	t.Logf("at most %d of A's holds between B's registration and its grant, in 20 counted rounds", worst)
	select {
	case err := <-errs:
		t.Fatalf("A: %v", err)
	default:
	}
}

// grantedWhileQueued has B take the lock once and give it back, and
// returns how many holds A made between B's registration (its first busy
// reply) and its grant, how many of A's waiters were queued at the grant,
// and whether B got a busy reply at all.
func grantedWhileQueued(t *testing.T, a, b *runtime.Locker, lock runtime.Lock, holds, holdsAtBusy *atomic.Int64, round int) (between int64, queued int, busy bool) {
	t.Helper()
	ctx := ctxTimeout(t, 10*time.Second)
	start := time.Now()
	h, err := b.Acquire(ctx, lock)
	if err != nil {
		t.Fatalf("round %d: B's waiter, while A's goroutines hand the lock around: %v after %v (A made %d holds meanwhile)", round, err, time.Since(start), holds.Load()-holdsAtBusy.Load())
	}
	queued = runtime.MutexWaitersInLine(a)
	between = holds.Load() - holdsAtBusy.Load()
	if err := h.Release(); err != nil {
		t.Errorf("round %d: %v", round, err)
	}
	return between, queued, holdsAtBusy.Load() >= 0
}

// handAround has n goroutines of l take lock and give it back at once,
// over and over, counting their holds in holds. warm is closed after 50
// holds; errs gets the first error of each goroutine; stop ends them and
// waits for them.
func handAround(ctx context.Context, l *runtime.Locker, lock runtime.Lock, n int, holds *atomic.Int64) (warm <-chan struct{}, errs <-chan error, stop func()) {
	done := make(chan struct{})
	warmed := make(chan struct{})
	failed := make(chan error, n)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				h, err := l.Acquire(ctx, lock)
				if err != nil {
					failed <- err
					return
				}
				if holds.Add(1) == 50 {
					close(warmed)
				}
				if err := h.Release(); err != nil {
					failed <- err
					return
				}
			}
		}()
	}
	return warmed, failed, func() {
		close(done)
		wg.Wait()
	}
}
