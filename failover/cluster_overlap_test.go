package failover_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockgen/lockgen/redistest"
	"github.com/lockgen/lockgen/runtime"
)

// clOverlapSlack bounds how long the first holder of a lost lock may go
// on holding it after a second holder got it. The holder hears of the
// takeover from its Pub/Sub connection to the dead master and the slot
// map, and its lock is verified then: about a round trip after the
// promotion. Without that it would hear at its next renewal, lease/3
// (10 s here) after its acquire.
const clOverlapSlack = time.Second

// A lock granted by a master that dies before its replica has it is lost:
// the promoted replica grants it again. The first holder must be told
// about one round trip after the takeover, not at its next renewal.
func TestClusterLostLockOverlap(t *testing.T) {
	cl := redistest.StartFailoverCluster(t, 3)
	admin := cl.Client(t)
	owner := cl.Nodes[0].Addr
	key := clKeysOn(t, admin, owner, "lost", 1)[0]
	slot := clSlot(t, admin, key)
	prefix := redistest.UniquePrefix()
	// A 30 s lease: no renewal falls due while the test runs.
	const lease = 30 * time.Second
	first := clNewLocker(t, cl, prefix, runtime.WithDefaultLease(lease))
	second := clNewLocker(t, cl, prefix, runtime.WithDefaultLease(lease))
	lock := runtime.Lock{Kind: runtime.Mutex, Key: key, Wait: runtime.NoWait}

	ctx, cancel := context.WithTimeout(context.Background(), 3*clWaitFor)
	defer cancel()
	var h1 *runtime.Held
	killedAt := time.Time{}
	_, _, err := cl.LoseWrites(ctx, slot, func() error {
		var err error
		h1, err = first.Acquire(ctx, lock)
		killedAt = time.Now()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	promoted := time.Now()
	cancelled := make(chan time.Time, 1)
	go func() {
		<-h1.Context().Done()
		cancelled <- time.Now()
	}()

	// The new master never had the lock: it grants it to the second
	// Locker.
	var granted time.Time
	for {
		h2, err := second.Acquire(ctx, lock)
		if err == nil {
			granted = time.Now()
			defer h2.Release()
			break
		}
		if !errors.Is(err, runtime.ErrNotAcquired) {
			t.Fatalf("second acquire on the new master: %v", err)
		}
		if time.Since(promoted) > clWaitFor {
			t.Fatalf("the new master still has the lock %v after the takeover: the write was not lost, the test proves nothing", clWaitFor)
		}
		time.Sleep(10 * time.Millisecond)
	}

	select {
	case at := <-cancelled:
		overlap := max(at.Sub(granted), 0)
		if overlap > clOverlapSlack {
			t.Errorf("the first holder kept the lock %v after the second got it, want within %v", overlap, clOverlapSlack)
		}
		if cause := context.Cause(h1.Context()); !clLost(cause) {
			t.Errorf("the first holder's context ended with %v, want ErrLockLost", cause)
		}
		t.Logf("lost lock: takeover %v after the kill; second grant %v after it; first holder cancelled %v after the takeover; overlap %v",
			promoted.Sub(killedAt).Round(time.Millisecond), granted.Sub(promoted).Round(time.Millisecond),
			at.Sub(promoted).Round(time.Millisecond), overlap.Round(time.Millisecond))
	case <-time.After(clWaitFor):
		t.Fatalf("the first holder was not told within %v that its lock was granted again", clWaitFor)
	}
}
