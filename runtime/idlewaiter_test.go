package runtime_test

import (
	"testing"
	"time"

	"github.com/lockgen/lockgen/lua"
	"github.com/lockgen/lockgen/runtime"
)

// A mutex waiter costs Redis almost nothing while it waits: after its
// first attempts (busy, subscribe, busy) it sleeps until an offer comes or
// the holder's lease would end, so while the holder renews it makes about
// one attempt per lease. Protocol 1 re-registered every window/3 (about 6
// attempts a second at the default window): 36 over this test's 6 s.
func TestIdleMutexWaiterDoesNotPoll(t *testing.T) {
	t.Parallel()
	const lease = 3 * time.Second
	const watched = 2 * lease
	prefix := uniquePrefix(t)
	holder := runtime.New(redisClient(t), runtime.WithKeyPrefix(prefix))
	t.Cleanup(func() { holder.Close() })
	observe, busy := busySignal()
	waiter, calls := countedLocker(t, prefix, runtime.WithObserver(observe))
	ctx := ctxTimeout(t, 30*time.Second)
	lock := runtime.Lock{Kind: runtime.Mutex, Key: "idle", Lease: lease}

	h, err := holder.Acquire(ctx, lock)
	if err != nil {
		t.Fatal(err)
	}
	got := acquireAsync(ctx, waiter, lock)
	waitBusy(t, busy, 2) // attempt, subscribe, attempt: it sleeps now
	before := calls.count()
	time.Sleep(watched) // the holder renews every lease/3 meanwhile
	n := calls.count() - before
	// At most one attempt per 2/3 of a lease (the holder's lease is never
	// less than that left when it renews on time), and one for slack.
	if most := int(watched/(2*lease/3)) + 1; n > most {
		t.Errorf("the waiter made %d attempts in %v while the holder renewed (lease %v), want at most %d", n, watched, lease, most)
	}
	if err := h.Release(); err != nil {
		t.Fatal(err)
	}
	a := <-got
	if a.err != nil {
		t.Fatalf("waiter: %v", a.err)
	}
	if err := a.h.Release(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d attempts in %v while waiting (lease %v)", n, watched, lease)
}

// fairCountedLocker returns a Locker on its own client whose fair_acquire
// and fair_heartbeat calls are recorded.
func fairCountedLocker(t *testing.T, prefix string, opts ...runtime.Option) (*runtime.Locker, *scriptCalls, *scriptCalls) {
	t.Helper()
	attempts := &scriptCalls{script: lua.FairAcquire}
	beats := &scriptCalls{script: lua.FairHeartbeat}
	rdb := redisClient(t)
	rdb.AddHook(attempts)
	rdb.AddHook(beats)
	l := runtime.New(rdb, append([]runtime.Option{runtime.WithKeyPrefix(prefix)}, opts...)...)
	t.Cleanup(func() { l.Close() })
	return l, attempts, beats
}

// A fair waiter behind a holder that renews makes no attempts of its own
// while it waits: its heartbeat keeps its place every 2/3 of a lease (it
// made one attempt per lease and a heartbeat every lease/3 before, about
// 5 calls over this test's 2 leases, each of 8 or 9 commands).
func TestIdleFairWaiterOnlyHeartbeats(t *testing.T) {
	t.Parallel()
	const lease = 3 * time.Second
	const watched = 2 * lease
	prefix := uniquePrefix(t)
	holder := runtime.New(redisClient(t), runtime.WithKeyPrefix(prefix))
	t.Cleanup(func() { holder.Close() })
	observe, busy := busySignal()
	waiter, attempts, beats := fairCountedLocker(t, prefix, runtime.WithObserver(observe))
	ctx := ctxTimeout(t, 30*time.Second)
	lock := runtime.Lock{Kind: runtime.Fair, Key: "idle", Lease: lease}

	h, err := holder.Acquire(ctx, lock)
	if err != nil {
		t.Fatal(err)
	}
	got := acquireAsync(ctx, waiter, lock)
	waitBusy(t, busy, 2) // attempt, subscribe, attempt: it sleeps now
	a0, b0 := attempts.count(), beats.count()
	time.Sleep(watched) // the holder renews every lease/3 meanwhile
	a, b := attempts.count()-a0, beats.count()-b0
	if a != 0 {
		t.Errorf("the waiter made %d attempts in %v while the holder renewed, want none (its heartbeat keeps its place)", a, watched)
	}
	// One heartbeat per 2/3 lease, one more for slack; at least one, or the
	// place would have run out.
	if most := int(watched/(2*lease/3)) + 1; b < 1 || b > most {
		t.Errorf("the waiter sent %d heartbeats in %v (lease %v), want 1..%d", b, watched, lease, most)
	}
	if err := h.Release(); err != nil {
		t.Fatal(err)
	}
	w := <-got
	if w.err != nil {
		t.Fatalf("waiter: %v", w.err)
	}
	if err := w.h.Release(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d attempts, %d heartbeats in %v while waiting (lease %v)", a, b, watched, lease)
}

// A fair holder that stops renewing (renew=false, never released: as if
// its process died) loses the lock at the end of its lease, and the
// waiter, which makes no attempts while it waits, still gets it then: its
// heartbeat falls due when the holder's lease ends (the previous
// heartbeat's reply said when), not 2/3 of a lease after the last one.
func TestFairWaiterTakesOverWhenTheHolderStops(t *testing.T) {
	t.Parallel()
	const lease = 3 * time.Second
	prefix := uniquePrefix(t)
	holder := runtime.New(redisClient(t), runtime.WithKeyPrefix(prefix))
	t.Cleanup(func() { holder.Close() })
	observe, busy := busySignal()
	waiter := runtime.New(redisClient(t), runtime.WithKeyPrefix(prefix), runtime.WithObserver(observe))
	t.Cleanup(func() { waiter.Close() })
	ctx := ctxTimeout(t, 30*time.Second)
	dead := runtime.Lock{Kind: runtime.Fair, Key: "stops", Lease: lease, NoRenew: true}
	lock := runtime.Lock{Kind: runtime.Fair, Key: "stops", Lease: lease}

	start := time.Now()
	if _, err := holder.Acquire(ctx, dead); err != nil {
		t.Fatal(err)
	}
	got := acquireAsync(ctx, waiter, lock)
	waitBusy(t, busy, 2)
	w := <-got
	if w.err != nil {
		t.Fatalf("waiter: %v", w.err)
	}
	defer w.h.Release()
	took := w.at.Sub(start)
	// The lease ends at 3 s; a heartbeat only every 2/3 lease after the
	// first (due at 2 s) would come at 4 s.
	if took < lease-100*time.Millisecond || took > lease+700*time.Millisecond {
		t.Errorf("the waiter got the lock %v after the holder took it, want about its lease (%v)", took, lease)
	}
	t.Logf("granted %v after the holder's acquire (lease %v)", took, lease)
}
