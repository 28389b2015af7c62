package backendtest_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/backendtest"
	"github.com/lockgen/lockgen/goredisbackend"
	"github.com/lockgen/lockgen/redistest"
	"github.com/lockgen/lockgen/runtime"
	"github.com/redis/go-redis/v9"
)

// The suite on go-redis: one redis-server, and a Cluster of three masters
// (wake-ups by sharded Pub/Sub, keys on whichever master owns their slot).
// Lockers share one client, as the goroutines of a process would.
func TestGoRedis(t *testing.T) {
	t.Run("server", func(t *testing.T) {
		backendtest.Run(t, goRedisTarget(redistest.Start(t).Client(t)))
	})
	t.Run("cluster", func(t *testing.T) {
		backendtest.Run(t, goRedisTarget(redistest.StartCluster(t, 3).Client(t)))
	})
}

func goRedisTarget(rdb redis.UniversalClient) backendtest.Target {
	return backendtest.Target{
		NewLocker: func(t *testing.T, opts ...runtime.Option) *runtime.Locker { return runtime.New(rdb, opts...) },
		Servers:   []backend.Backend{goredisbackend.New(rdb)},
	}
}

// The suite on a quorum Locker over three and over five redis-servers
// (the backends quorum.New builds): mutexes only. With five, a release that
// offered the lock server by server could name a different waiter on each,
// none on a majority: the waiters would then sit out their offers, which
// slows MutualExclusion down and can run it out of its context.
func TestQuorum(t *testing.T) {
	for _, n := range []int{3, 5} {
		t.Run(fmt.Sprintf("%d servers", n), func(t *testing.T) { backendtest.Run(t, quorumTarget(t, n)) })
	}
}

func quorumTarget(t *testing.T, n int) backendtest.Target {
	var clients []redis.UniversalClient
	for range n {
		srv := redistest.Start(t)
		// A slow server must fail a call quickly, not after go-redis's
		// default dial timeout and retries.
		c := redis.NewClient(&redis.Options{Addr: srv.Addr, DialTimeout: time.Second, MaxRetries: -1})
		t.Cleanup(func() { c.Close() })
		clients = append(clients, c)
	}
	// What quorum.New(clients) builds: a go-redis backend per client.
	backends := func() []backend.Backend {
		out := make([]backend.Backend, len(clients))
		for i, c := range clients {
			out[i] = goredisbackend.New(c)
		}
		return out
	}
	return backendtest.Quorum(backends(), backends)
}
