package failover_test

import (
	"context"
	"testing"
	"time"

	"github.com/lockgen/lockgen/redistest"
	"github.com/lockgen/lockgen/runtime"
)

// The Cluster failover tests start 3 masters with a replica each (node
// timeout 1 s), hold every kind on one master with a waiter queued behind
// each (in another Locker, on fresh go-redis clients with default
// options), run two clients that churn fresh locks on the same master, and
// fail that master over. They check that:
//   - the held locks, which were on the replica, keep their holders;
//   - no waiter fails while its wait has time left, and each gets its lock
//     within clWakeSlack of the release that follows the failover, which
//     only a wake message on the new master can do;
//   - no churn acquire fails, one succeeds soon after the takeover, and a
//     graceful failover grants no lock twice.

// clCase is a lock held by the holder Locker and the lock its waiter asks
// for.
type clCase struct {
	name       string
	hold, wait runtime.Lock
}

// clPerKind is how many locks of each kind the scenario holds.
const clPerKind = 4

// clCases returns clPerKind cases of each kind, one per key.
func clCases(keys []string) []clCase {
	lock := func(kind runtime.Kind, key string) runtime.Lock {
		l := runtime.Lock{Kind: kind, Key: key}
		if kind == runtime.Semaphore {
			l.Permits = 1
		}
		return l
	}
	var cases []clCase
	for i := 0; i+5 <= len(keys); i += 5 {
		k := keys[i : i+5]
		cases = append(cases,
			clCase{"mutex " + k[0], lock(runtime.Mutex, k[0]), lock(runtime.Mutex, k[0])},
			clCase{"fair " + k[1], lock(runtime.Fair, k[1]), lock(runtime.Fair, k[1])},
			clCase{"read " + k[2], lock(runtime.Read, k[2]), lock(runtime.Write, k[2])},
			clCase{"write " + k[3], lock(runtime.Write, k[3]), lock(runtime.Write, k[3])},
			clCase{"semaphore " + k[4], lock(runtime.Semaphore, k[4]), lock(runtime.Semaphore, k[4])},
		)
	}
	return cases
}

// clFailover fails over the master of slot and returns the new master's
// address when every live node sees it as the owner.
type clFailover func(ctx context.Context, cl *redistest.Cluster, slot int) (string, error)

func TestClusterGracefulFailover(t *testing.T) {
	clFailoverScenario(t, "graceful", 2*time.Second, 0, func(ctx context.Context, cl *redistest.Cluster, slot int) (string, error) {
		return cl.Failover(ctx, slot)
	})
}

// With WithReplicas, every acquire is the pipeline of its script and
// WAIT, sent to the node the backend picks: it must follow the slot too.
func TestClusterGracefulFailoverWithReplicas(t *testing.T) {
	clFailoverScenario(t, "graceful, WithReplicas(1)", 2*time.Second, 0, func(ctx context.Context, cl *redistest.Cluster, slot int) (string, error) {
		return cl.Failover(ctx, slot)
	}, runtime.WithReplicas(1, time.Second))
}

// Failed over and back: the waiters' subscriptions left on the demoted
// master serve again when it is promoted back.
func TestClusterFailoverAndBack(t *testing.T) {
	clFailoverScenario(t, "graceful, there and back", 2*time.Second, 0, func(ctx context.Context, cl *redistest.Cluster, slot int) (string, error) {
		if _, err := cl.Failover(ctx, slot); err != nil {
			return "", err
		}
		return cl.Failover(ctx, slot)
	})
}

func TestClusterMasterKilled(t *testing.T) {
	// An asynchronous replication may lose the grants of the last
	// moments before the kill: their double grants are counted, not
	// bounded.
	clFailoverScenario(t, "SIGKILL", 5*time.Second, 1<<30, func(ctx context.Context, cl *redistest.Cluster, slot int) (string, error) {
		_, addr, err := cl.KillMaster(ctx, slot)
		return addr, err
	})
}

// clWaiterResult is what one waiter's Acquire returned, and when.
type clWaiterResult struct {
	at  time.Time
	h   *runtime.Held
	err error
}

// clFailoverScenario runs the scenario described above with failover;
// after the takeover, a churn acquire must succeed within maxRecovery.
// maxDoubles bounds the churn's double grants; opts apply to every Locker.
func clFailoverScenario(t *testing.T, name string, maxRecovery time.Duration, maxDoubles int, failover clFailover, opts ...runtime.Option) {
	cl := redistest.StartFailoverCluster(t, 3)
	admin := cl.Client(t)
	owner := cl.Nodes[0].Addr // the masters come first
	keys := clKeysOn(t, admin, owner, "k", 5*clPerKind)
	churnKeys := clKeysOn(t, admin, owner, "churn", 20)
	slot := clSlot(t, admin, keys[0])

	prefix := redistest.UniquePrefix()
	holderEv, waiterEv := newClEvents(), newClEvents()
	with := func(o ...runtime.Option) []runtime.Option { return append(o, opts...) }
	holder := clNewLocker(t, cl, prefix, with(runtime.WithObserver(holderEv.observe))...)
	// Waiters that renew their registration every 30 s: only a wake
	// message lets them in quickly.
	waiters := clNewLocker(t, cl, prefix, with(runtime.WithObserver(waiterEv.observe), runtime.WithWaiterWindow(30*time.Second))...)
	churners := []*runtime.Locker{clNewLocker(t, cl, prefix, opts...), clNewLocker(t, cl, prefix, opts...)}

	cases := clCases(keys)
	held := make([]*runtime.Held, len(cases))
	ctx, cancel := context.WithTimeout(context.Background(), 2*clWaitFor)
	defer cancel()
	for i, c := range cases {
		var err error
		if held[i], err = holder.Acquire(ctx, c.hold); err != nil {
			t.Fatalf("%s: hold: %v", c.name, err)
		}
	}
	results := make([]chan clWaiterResult, len(cases))
	for i, c := range cases {
		results[i] = make(chan clWaiterResult, 1)
		w := c.wait
		w.Wait = 3 * clWaitFor
		go func() {
			h, err := waiters.Acquire(context.Background(), w)
			results[i] <- clWaiterResult{time.Now(), h, err}
		}()
	}
	waiterEv.waitBusy(t, keys, 2)
	churn := startClChurn(churners, churnKeys)
	churn.waitGrants(time.Now(), 10)
	clReplicate(t, owner)

	failStart := time.Now()
	newMaster, err := failover(ctx, cl, slot)
	if err != nil {
		churn.finish()
		t.Fatal(err)
	}
	promoted := time.Now()
	t.Logf("%s failover of %s: the replica took over %v after it began", name, owner, promoted.Sub(failStart).Round(time.Millisecond))

	// The waiters' subscriptions are in the slot's shard: on the old
	// master if it is alive (now a replica, it still delivers the shard's
	// messages), else again on the new one after their connection dropped
	// (after a failover there and back, on any node of the shard).
	clWaitShardChannels(t, clShardNodes(cl, newMaster, owner), prefix, len(cases))
	t.Logf("%s: wake channels on the new master: %d", name, clShardChannels(newMaster, prefix))

	// The held locks were replicated: their holders keep them, renewed
	// on the new master.
	holderEv.waitRenewedSince(t, keys, promoted)
	for i, h := range held {
		if err := context.Cause(h.Context()); err != nil {
			t.Errorf("%s: the holder lost a lock that survived the failover: %v", cases[i].name, err)
		}
	}
	for i := range cases {
		select {
		case r := <-results[i]:
			t.Fatalf("%s: the waiter returned while the lock was held: %v", cases[i].name, r.err)
		default:
		}
	}

	// Each waiter gets its lock from its wake message on the new master.
	var delays []time.Duration
	for i, h := range held {
		released := time.Now()
		if err := h.Release(); err != nil {
			t.Errorf("%s: release after the failover: %v", cases[i].name, err)
		}
		select {
		case r := <-results[i]:
			if r.err != nil {
				t.Errorf("%s: the waiter failed: %v", cases[i].name, r.err)
				continue
			}
			d := r.at.Sub(released)
			delays = append(delays, d)
			if d > clWakeSlack {
				t.Errorf("%s: the waiter got the lock %v after the release, want within %v", cases[i].name, d, clWakeSlack)
			}
			r.h.Release()
		case <-time.After(clWaitFor):
			t.Errorf("%s: the waiter did not get the lock within %v of the release", cases[i].name, clWaitFor)
		}
	}

	churn.waitGrants(promoted, 10)
	st := clChurnReport(t, churn.finish(), promoted)
	if st.firstAfter > maxRecovery {
		t.Errorf("the first churn acquire begun after the takeover got its lock %v after it, want within %v", st.firstAfter, maxRecovery)
	}
	if st.doubles > maxDoubles {
		t.Errorf("%d double grants among %d churn grants, want at most %d", st.doubles, st.grants, maxDoubles)
	}
	t.Logf("%s: waiters got their locks %v (max %v) after the release; churn: %d double grants of %d grants (%d acquires), first grant after the takeover in %v, longest acquire %v",
		name, clPercentile(delays, 50), clPercentile(delays, 100), st.doubles, st.grants, st.acquires, st.firstAfter.Round(time.Millisecond), st.longest.Round(time.Millisecond))
}
