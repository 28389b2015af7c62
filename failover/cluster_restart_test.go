package failover_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockgen/lockgen/redistest"
	"github.com/lockgen/lockgen/runtime"
)

// clRestartSlack bounds how long the holder of a lock on a master that
// restarted empty may go on holding it after another client was granted
// it: about a round trip after the first call that reaches the restarted
// master, with slack for a busy machine; far below the renewal period
// (lease/3, 10 s here), which was all that told it before.
const clRestartSlack = 1500 * time.Millisecond

// A Cluster master that restarts empty at its address keeps its slots
// (nodes.conf): the slot map does not change, yet every lock it held is
// gone and it grants them again. The holders must be told about a round
// trip after the restarted master is first reached, not at their next
// renewal.
func TestClusterMasterRestartedEmpty(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	admin := cl.Client(t)
	owner := cl.Nodes[0]
	keys := clKeysOn(t, admin, owner.Addr, "restart", 2)
	prefix := redistest.UniquePrefix()
	// A 30 s lease: no renewal falls due while the test runs.
	const lease = 30 * time.Second
	first := clNewLocker(t, cl, prefix, runtime.WithDefaultLease(lease))
	second := clNewLocker(t, cl, prefix, runtime.WithDefaultLease(lease))
	ctx, cancel := context.WithTimeout(context.Background(), 3*clWaitFor)
	defer cancel()

	cancelled := make(chan time.Time, len(keys))
	var held []*runtime.Held
	for _, key := range keys {
		h, err := first.Acquire(ctx, runtime.Lock{Kind: runtime.Mutex, Key: key, Wait: runtime.NoWait})
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, h)
		go func() {
			<-h.Context().Done()
			cancelled <- time.Now()
		}()
	}

	owner.Kill()
	if err := owner.Restart(); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()

	// The restarted master has no lock: it grants the first key to the
	// second Locker (after CLUSTERDOWN or a refused dial, for a while).
	var granted time.Time
	lock := runtime.Lock{Kind: runtime.Mutex, Key: keys[0], Wait: runtime.NoWait}
	for {
		h2, err := second.Acquire(ctx, lock)
		if err == nil {
			granted = time.Now()
			defer h2.Release()
			break
		}
		if errors.Is(err, runtime.ErrNotAcquired) {
			t.Fatalf("second acquire on the restarted master: %v: it kept the lock, the test proves nothing", err)
		}
		if time.Since(restarted) > clWaitFor {
			t.Fatalf("the restarted master grants nothing %v after its restart: %v", clWaitFor, err)
		}
		time.Sleep(10 * time.Millisecond)
	}

	for i := range held {
		select {
		case at := <-cancelled:
			overlap := max(at.Sub(granted), 0)
			if overlap > clRestartSlack {
				t.Errorf("holder %d kept its lock %v after the second Locker got it, want within %v", i, overlap.Round(time.Millisecond), clRestartSlack)
			}
			t.Logf("holder %d told %v after the restart; second grant %v after it; overlap %v",
				i, at.Sub(restarted).Round(time.Millisecond), granted.Sub(restarted).Round(time.Millisecond), overlap.Round(time.Millisecond))
		case <-time.After(clWaitFor):
			t.Fatalf("a holder was not told within %v that its master restarted empty", clWaitFor)
		}
	}
	for i, h := range held {
		if cause := context.Cause(h.Context()); !clLost(cause) {
			t.Errorf("holder %d's context ended with %v, want ErrLockLost", i, cause)
		}
	}
}
