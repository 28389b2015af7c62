package runtime_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/embedded"
	"github.com/lockgen/lockgen/goredisbackend"
	"github.com/lockgen/lockgen/redistest"
	"github.com/lockgen/lockgen/runtime"
	"github.com/redis/go-redis/v9"
)

// A target is a place locks live: the embedded shim, or a real
// redis-server. Most tests run on both. newLocker returns Lockers that
// share one keyspace, as several processes would.
type target struct {
	name      string
	newLocker func(t testing.TB, opts ...runtime.Option) *runtime.Locker
	// newLockerVia is newLocker on a backend wrapped by wrap (to drop or
	// count what passes).
	newLockerVia func(t testing.TB, wrap func(backend.Backend) backend.Backend, opts ...runtime.Option) *runtime.Locker
	// do runs a command against the keyspace behind the Lockers' back.
	do func(t testing.TB, args ...string) (any, error)
}

// sharedRedis is the package's redis-server; each test keeps to its own
// key prefix (uniquePrefix).
//
// Tests that spend their time waiting on leases, heartbeats or restarts,
// on their own servers or their own key prefix, call t.Parallel: the
// package's tests would otherwise take minutes of timers end to end. Tests
// that watch process-wide state (goroutine counts, allocations, CPU
// burners, CLIENT KILL on the shared server) stay sequential; Go runs the
// parallel tests only after the sequential ones have finished.
var sharedRedis redistest.Shared

// TestMain stops the redis-server shared by the tests of this package.
func TestMain(m *testing.M) {
	redistest.QuietGoRedisLogs() // its dial-failure lines would bury the output
	if os.Getenv(childEnv) != "" {
		os.Exit(childMain())
	}
	code := m.Run()
	sharedRedis.Close()
	os.Exit(code)
}

func redisServer(t testing.TB) *redistest.Server { return sharedRedis.Server(t) }
func redisClient(t testing.TB) *redis.Client     { return sharedRedis.Client(t) }
func uniquePrefix(testing.TB) string             { return redistest.UniquePrefix() }

func targets(t *testing.T) []target {
	return []target{embeddedTarget(t), redisTarget(t)}
}

func embeddedTarget(t *testing.T) target {
	b := embedded.NewBackend(nil)
	prefix := uniquePrefix(t)
	via := func(t testing.TB, wrap func(backend.Backend) backend.Backend, opts ...runtime.Option) *runtime.Locker {
		l := runtime.NewWithBackend(wrap(b), append([]runtime.Option{runtime.WithKeyPrefix(prefix)}, opts...)...)
		t.Cleanup(func() { l.Close() })
		return l
	}
	return target{
		name: "embedded",
		newLocker: func(t testing.TB, opts ...runtime.Option) *runtime.Locker {
			return via(t, sameBackend, opts...)
		},
		newLockerVia: via,
		do: func(t testing.TB, args ...string) (any, error) {
			return b.Server().Do(rewriteKeys(prefix, args)...)
		},
	}
}

func redisTarget(t *testing.T) target {
	prefix := uniquePrefix(t)
	rdb := redisClient(t)
	return target{
		name: "redis",
		newLocker: func(t testing.TB, opts ...runtime.Option) *runtime.Locker {
			l := runtime.New(rdb, append([]runtime.Option{runtime.WithKeyPrefix(prefix)}, opts...)...)
			t.Cleanup(func() { l.Close() })
			return l
		},
		newLockerVia: func(t testing.TB, wrap func(backend.Backend) backend.Backend, opts ...runtime.Option) *runtime.Locker {
			l := runtime.NewWithBackend(wrap(goredisbackend.New(rdb)), append([]runtime.Option{runtime.WithKeyPrefix(prefix)}, opts...)...)
			t.Cleanup(func() { l.Close() })
			return l
		},
		do: func(t testing.TB, args ...string) (any, error) {
			a := make([]any, 0, len(args))
			for _, s := range rewriteKeys(prefix, args) {
				a = append(a, s)
			}
			v, err := rdb.Do(context.Background(), a...).Result()
			if err == redis.Nil {
				return nil, nil
			}
			return v, err
		},
	}
}

func sameBackend(b backend.Backend) backend.Backend { return b }

// rewriteKeys replaces "@" at the start of an argument by the target's key
// prefix: do(t, "DEL", "@mutex:{k}").
func rewriteKeys(prefix string, args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if len(a) > 0 && a[0] == '@' {
			a = prefix + a[1:]
		}
		out[i] = a
	}
	return out
}

// forEachTarget runs f as a subtest on every target.
func forEachTarget(t *testing.T, f func(t *testing.T, tg target)) {
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) { f(t, tg) })
	}
}

// ctxTimeout returns a context that ends the test's waits in bounded time.
func ctxTimeout(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
