package latch_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync"
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

var (
	sharedRedisOnce sync.Once
	sharedRedis     *redistest.Server
	sharedRedisErr  error
)

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
	if sharedRedis != nil {
		sharedRedis.Close()
	}
	os.Exit(code)
}

func childMain() int {
	rdb := redis.NewClient(&redis.Options{Addr: os.Getenv("LOCKGEN_ADDR")})
	defer rdb.Close()
	l := runtime.New(rdb, runtime.WithKeyPrefix(os.Getenv("LOCKGEN_PREFIX")))
	defer l.Close()
	var err error
	switch mode := os.Getenv(childEnv); mode {
	case "latch-await":
		err = childLatchAwait(l)
	case "latch-count":
		err = childLatchCount(l)
	default:
		err = fmt.Errorf("unknown child mode %q", mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	return 0
}

func startChild(t *testing.T, mode, prefix string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+mode, "LOCKGEN_ADDR="+redisServer(t).Addr, "LOCKGEN_PREFIX="+prefix)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = os.Stderr
	return cmd
}

// redisServer returns the package's shared redis-server, started on first
// use. Each test uses its own key prefix, so tests do not see each other.
func redisServer(t testing.TB) *redistest.Server {
	t.Helper()
	sharedRedisOnce.Do(func() { sharedRedis, sharedRedisErr = redistest.Launch() })
	if sharedRedisErr != nil {
		t.Fatalf("redistest: %v", sharedRedisErr)
	}
	return sharedRedis
}

func redisClient(t testing.TB) *redis.Client {
	t.Helper()
	c := redis.NewClient(redisServer(t).Options())
	t.Cleanup(func() { c.Close() })
	return c
}

var prefixSeq struct {
	sync.Mutex
	n int
}

// uniquePrefix keeps the keys of one test apart from the others'.
func uniquePrefix(t testing.TB) string {
	prefixSeq.Lock()
	defer prefixSeq.Unlock()
	prefixSeq.n++
	return fmt.Sprintf("t%d-%d:", os.Getpid(), prefixSeq.n)
}

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

// masterOf returns the address of the Cluster master that serves key.
func masterOf(t *testing.T, rdb *redis.ClusterClient, key string) string {
	t.Helper()
	ctx := context.Background()
	slot, err := rdb.ClusterKeySlot(ctx, key).Result()
	if err != nil {
		t.Fatal(err)
	}
	ranges, err := rdb.ClusterSlots(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range ranges {
		if int64(r.Start) <= slot && slot <= int64(r.End) {
			return r.Nodes[0].Addr
		}
	}
	t.Fatalf("no master for slot %d", slot)
	return ""
}
