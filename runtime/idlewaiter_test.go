package runtime_test

import (
	"testing"
	"time"

	"github.com/lockgen/lockgen/runtime"
)

// A mutex waiter costs Redis almost nothing while it waits: after its
// first attempts (busy, subscribe, busy) it sleeps until an offer comes or
// the holder's lease would end, so while the holder renews it makes about
// one attempt per lease. Protocol 1 re-registered every window/3 (about 6
// attempts a second at the default window): 36 over this test's 6 s.
func TestIdleMutexWaiterDoesNotPoll(t *testing.T) {
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
