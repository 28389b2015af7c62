package runtime_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockgen/lockgen/redistest"
	"github.com/lockgen/lockgen/runtime"
	"github.com/redis/go-redis/v9"
)

// startReplicated starts a master and one replica of it and waits until
// the replica reports its link to the master up.
func startReplicated(t *testing.T) (master, replica *redis.Client) {
	t.Helper()
	m := redistest.Start(t)
	r := redistest.Start(t, "--replicaof", "127.0.0.1", strconv.Itoa(m.Port))
	master, replica = m.Client(t), r.Client(t)
	ctx := ctxTimeout(t, 15*time.Second)
	for {
		info, err := replica.Info(ctx, "replication").Result()
		if err == nil && strings.Contains(info, "master_link_status:up") {
			return master, replica
		}
		select {
		case <-ctx.Done():
			t.Fatalf("replica link not up within 15s: %v\n%s", err, info)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func TestReplicaSafety(t *testing.T) {
	t.Parallel()
	master, replica := startReplicated(t)
	prefix := uniquePrefix(t)
	kinds := []runtime.Lock{
		{Kind: runtime.Mutex, Key: "pay"},
		{Kind: runtime.Fair, Key: "pay"},
		{Kind: runtime.Read, Key: "doc"},
		{Kind: runtime.Write, Key: "doc"},
		{Kind: runtime.Semaphore, Key: "pool", Permits: 2},
	}

	t.Run("acknowledged", func(t *testing.T) {
		l := runtime.New(master, runtime.WithKeyPrefix(prefix), runtime.WithReplicas(1, 2*time.Second))
		defer l.Close()
		ctx := ctxTimeout(t, 10*time.Second)
		for _, lock := range kinds {
			h, err := l.Acquire(ctx, lock)
			if err != nil {
				t.Fatalf("%v with one replica required and one present: %v", lock.Kind, err)
			}
			// WAIT returned, so the replica has the lock's keys already.
			keys, err := replica.Keys(ctx, prefix+"*").Result()
			if err != nil {
				t.Fatal(err)
			}
			if len(keys) == 0 {
				t.Errorf("%v: acquire returned but the replica has no key under %q", lock.Kind, prefix)
			}
			if err := h.Release(); err != nil {
				t.Fatalf("%v release: %v", lock.Kind, err)
			}
		}
	})

	t.Run("not acknowledged", func(t *testing.T) {
		const timeout = 100 * time.Millisecond
		l := runtime.New(master, runtime.WithKeyPrefix(prefix), runtime.WithReplicas(2, timeout))
		defer l.Close()
		plain := runtime.New(master, runtime.WithKeyPrefix(prefix))
		defer plain.Close()
		ctx := ctxTimeout(t, 10*time.Second)
		for _, lock := range kinds {
			start := time.Now()
			h, err := l.Acquire(ctx, lock)
			if !errors.Is(err, runtime.ErrNotReplicated) {
				if err == nil {
					h.Release()
				}
				t.Fatalf("%v with two replicas required and one present: %v, want ErrNotReplicated", lock.Kind, err)
			}
			if took := time.Since(start); took < timeout {
				t.Errorf("%v: failed after %v, before the WAIT timeout %v", lock.Kind, took, timeout)
			}
			// The lock was given back: no key of it is left but its
			// last fence (kept for the fence floor), and another Locker
			// takes it at once.
			keys, err := master.Keys(ctx, prefix+"*").Result()
			if err != nil {
				t.Fatal(err)
			}
			if left := beyondFloor(ctx, t, master, keys); len(left) != 0 {
				t.Errorf("%v: keys left behind after ErrNotReplicated: %v", lock.Kind, left)
			}
			try := lock
			try.Wait = runtime.NoWait
			h, err = plain.Acquire(ctx, try)
			if err != nil {
				t.Fatalf("%v after ErrNotReplicated: %v, want the lock free", lock.Kind, err)
			}
			if err := h.Release(); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// Replica safety is checked against the options before any Redis call.
func TestReplicaOptionsValidated(t *testing.T) {
	l := runtime.New(redisClient(t), runtime.WithReplicas(1, 0))
	defer l.Close()
	_, err := l.Acquire(context.Background(), runtime.Lock{Kind: runtime.Mutex, Key: "k"})
	if !errors.Is(err, runtime.ErrInvalidLock) {
		t.Fatalf("WithReplicas(1, 0): %v, want ErrInvalidLock", err)
	}
}
