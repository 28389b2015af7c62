package backendtest_test

import (
	"testing"
	"time"

	"github.com/lockgen/lockgen/backendtest"
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
		Servers:   []runtime.Backend{runtime.NewGoRedisBackend(rdb)},
	}
}

// The suite on a quorum Locker over three redis-servers (NewQuorum, as
// users build one): mutexes only.
func TestQuorum(t *testing.T) {
	var clients []redis.UniversalClient
	var servers []runtime.Backend
	for range 3 {
		srv := redistest.Start(t)
		// A slow server must fail a call quickly, not after go-redis's
		// default dial timeout and retries.
		c := redis.NewClient(&redis.Options{Addr: srv.Addr, DialTimeout: time.Second, MaxRetries: -1})
		t.Cleanup(func() { c.Close() })
		clients = append(clients, c)
		servers = append(servers, runtime.NewGoRedisBackend(c))
	}
	backendtest.Run(t, backendtest.Target{
		NewLocker: func(t *testing.T, opts ...runtime.Option) *runtime.Locker {
			l, err := runtime.NewQuorum(clients, opts...)
			if err != nil {
				t.Fatalf("NewQuorum: %v", err)
			}
			return l
		},
		Servers: servers,
		Kinds:   []runtime.Kind{runtime.Mutex},
	})
}
