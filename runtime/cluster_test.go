package runtime_test

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/lockgen/lockgen/redistest"
	"github.com/lockgen/lockgen/runtime"
)

// Every kind works on a 3-master Cluster: exclusion, wake-ups by sharded
// Pub/Sub, and one call over keys on different masters.
func TestClusterEveryKind(t *testing.T) {
	t.Parallel()
	cl := redistest.StartCluster(t, 3)
	rdb := cl.Client(t)
	prefix := uniquePrefix(t)
	newLocker := func(opts ...runtime.Option) *runtime.Locker {
		l := runtime.New(rdb, append([]runtime.Option{runtime.WithKeyPrefix(prefix)}, opts...)...)
		t.Cleanup(func() { l.Close() })
		return l
	}
	// b's mutex waiters renew their registration every 10s: only a wake
	// message can let them in quickly.
	observe, busy := busySignal()
	a, b := newLocker(), newLocker(runtime.WithObserver(observe), runtime.WithWaiterWindow(30*time.Second))

	t.Run("read", func(t *testing.T) {
		ctx := ctxTimeout(t, 10*time.Second)
		r := runtime.Lock{Kind: runtime.Read, Key: "r", Wait: runtime.NoWait}
		h1, err := a.Acquire(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		h2, err := b.Acquire(ctx, r)
		if err != nil {
			t.Fatalf("second reader: %v", err)
		}
		if _, err := b.Acquire(ctx, runtime.Lock{Kind: runtime.Write, Key: "r", Wait: runtime.NoWait}); !errors.Is(err, runtime.ErrNotAcquired) {
			t.Fatalf("writer while read: %v, want ErrNotAcquired", err)
		}
		h1.Release()
		h2.Release()
	})
	for _, kind := range []runtime.Kind{runtime.Mutex, runtime.Fair, runtime.Write, runtime.Semaphore} {
		t.Run(kind.String(), func(t *testing.T) {
			lock := func(key string) runtime.Lock {
				l := runtime.Lock{Kind: kind, Key: key, Lease: 20 * time.Second}
				if kind == runtime.Semaphore {
					l.Permits = 1
				}
				return l
			}
			family := map[runtime.Kind]string{runtime.Mutex: "mutex", runtime.Fair: "fair", runtime.Write: "rw", runtime.Semaphore: "sem"}[kind]
			// Two keys whose locks live on different masters.
			k1 := "c:0"
			m1 := redistest.MasterOf(t, rdb, prefix+family+":{"+k1+"}")
			k2 := ""
			for i := 1; i < 100 && k2 == ""; i++ {
				k := "c:" + strconv.Itoa(i)
				if redistest.MasterOf(t, rdb, prefix+family+":{"+k+"}") != m1 {
					k2 = k
				}
			}
			if k2 == "" {
				t.Fatal("no key on another master among 100")
			}
			ctx := ctxTimeout(t, 10*time.Second)
			h, err := a.Acquire(ctx, lock(k1), lock(k2))
			if err != nil {
				t.Fatalf("multi-key over two masters: %v", err)
			}
			try := lock(k2)
			try.Wait = runtime.NoWait
			if _, err := b.Acquire(ctx, try); !errors.Is(err, runtime.ErrNotAcquired) {
				t.Fatalf("second holder: %v, want ErrNotAcquired", err)
			}
			drain(busy)
			got := acquireAsync(ctx, b, lock(k1))
			waitBusy(t, busy, 2) // attempt, subscribe, attempt: it sleeps
			if err := h.Release(); err != nil {
				t.Fatal(err)
			}
			select {
			case a := <-got:
				if a.err != nil {
					t.Fatal(a.err)
				}
				if err := a.h.Release(); err != nil {
					t.Fatal(err)
				}
			case <-time.After(3 * time.Second):
				t.Fatal("waiter not woken by SPUBLISH within 3s (lease 20s)")
			}
		})
	}
}
