package latch_test

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockgen/lockgen/embedded"
	"github.com/lockgen/lockgen/redistest"
	"github.com/lockgen/lockgen/runtime"
)

// A target is a place latches live: the embedded shim, or a real
// redis-server. newLocker returns Lockers that share one keyspace, as
// several processes would; do runs a command on that keyspace behind the
// Lockers' back ("@" at the start of an argument stands for the prefix).
type target struct {
	name      string
	newLocker func(t testing.TB) *runtime.Locker
	do        func(t testing.TB, args ...string) (any, error)
}

// sharedRedis is the package's redis-server; each test keeps to its own
// key prefix (uniquePrefix).
var sharedRedis redistest.Shared

// Tests that need several OS processes re-execute the test binary with
// childEnv set to a mode (childMain); the child's settings come in further
// LOCKGEN_* variables.
const childEnv = "LOCKGEN_LATCH_CHILD"

// TestMain sends a child process to childMain, and stops the redis-server
// shared by the tests of this package.
func TestMain(m *testing.M) {
	redistest.QuietGoRedisLogs() // its dial-failure lines would bury the output
	if os.Getenv(childEnv) != "" {
		os.Exit(childMain())
	}
	code := m.Run()
	sharedRedis.Close()
	os.Exit(code)
}

func childMain() int {
	rdb := redis.NewClient(&redis.Options{Addr: os.Getenv("LOCKGEN_ADDR")})
	defer rdb.Close()
	l := runtime.New(rdb, runtime.WithKeyPrefix(os.Getenv("LOCKGEN_PREFIX")))
	defer l.Close()
	return redistest.RunChild(os.Getenv(childEnv), map[string]func() error{
		"latch-await": func() error { return childLatchAwait(l) },
		"latch-count": func() error { return childLatchCount(l) },
	})
}

func startChild(t *testing.T, mode, prefix string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+mode, "LOCKGEN_ADDR="+redisServer(t).Addr, "LOCKGEN_PREFIX="+prefix)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = os.Stderr
	return cmd
}

func redisServer(t testing.TB) *redistest.Server { return sharedRedis.Server(t) }
func redisClient(t testing.TB) *redis.Client     { return sharedRedis.Client(t) }
func uniquePrefix(testing.TB) string             { return redistest.UniquePrefix() }

func embeddedTarget(t *testing.T) target {
	b := embedded.NewBackend(nil)
	prefix := uniquePrefix(t)
	return target{
		name: "embedded",
		newLocker: func(t testing.TB) *runtime.Locker {
			l := runtime.NewWithBackend(b, runtime.WithKeyPrefix(prefix))
			t.Cleanup(func() { l.Close() })
			return l
		},
		do: func(t testing.TB, args ...string) (any, error) {
			return b.Server().Do(withPrefix(prefix, args)...)
		},
	}
}

func redisTarget(t *testing.T) target {
	prefix := uniquePrefix(t)
	rdb := redisClient(t)
	return target{
		name: "redis",
		newLocker: func(t testing.TB) *runtime.Locker {
			l := runtime.New(rdb, runtime.WithKeyPrefix(prefix))
			t.Cleanup(func() { l.Close() })
			return l
		},
		do: func(t testing.TB, args ...string) (any, error) {
			a := make([]any, 0, len(args))
			for _, s := range withPrefix(prefix, args) {
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

// withPrefix replaces "@" at the start of an argument by prefix.
func withPrefix(prefix string, args []string) []string {
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
	for _, tg := range []target{embeddedTarget(t), redisTarget(t)} {
		t.Run(tg.name, func(t *testing.T) { f(t, tg) })
	}
}

// ctxTimeout returns a context that ends the test's waits in bounded time.
func ctxTimeout(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
