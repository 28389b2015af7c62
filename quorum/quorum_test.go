package quorum_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockgen/lockgen/backendtest"
	"github.com/lockgen/lockgen/lua"
	"github.com/lockgen/lockgen/quorum"
	"github.com/lockgen/lockgen/redistest"
	"github.com/lockgen/lockgen/runtime"
	"github.com/redis/go-redis/v9"
)

// deployments is n independent redis-servers started for one test, and a
// client on each.
type deployments struct {
	servers []*redistest.Server
	clients []redis.UniversalClient
	prefix  string
}

func startQuorum(t testing.TB, n int) *deployments {
	t.Helper()
	q := &deployments{prefix: backendtest.KeyPrefix(t)}
	for range n {
		s := redistest.Start(t)
		// A dead server must fail a call quickly, not after go-redis's
		// default dial timeout and three retries.
		c := redis.NewClient(&redis.Options{Addr: s.Addr, DialTimeout: 300 * time.Millisecond, MaxRetries: -1})
		t.Cleanup(func() { c.Close() })
		q.servers = append(q.servers, s)
		q.clients = append(q.clients, c)
	}
	return q
}

// locker returns a quorum Locker on the servers, as one process would have.
func (q *deployments) locker(t testing.TB, opts ...runtime.Option) *runtime.Locker {
	t.Helper()
	l, err := quorum.New(q.clients, append([]runtime.Option{runtime.WithKeyPrefix(q.prefix)}, opts...)...)
	if err != nil {
		t.Fatalf("quorum.New: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// lockValues returns the lock values ("<holder> <fence> <waiters>") of the
// test's mutex keys on server i, by key.
func (q *deployments) lockValues(t *testing.T, i int) map[string]string {
	t.Helper()
	ctx := backendtest.Timeout(t, 5*time.Second)
	keys, err := q.clients[i].Keys(ctx, q.prefix+"mutex:*").Result()
	if err != nil {
		t.Fatalf("server %d: KEYS: %v", i+1, err)
	}
	out := map[string]string{}
	for _, k := range keys {
		if v, err := q.clients[i].Get(ctx, k).Result(); err == nil {
			out[k] = v
		}
	}
	return out
}

func mutexLock(key string, lease time.Duration) runtime.Lock {
	return runtime.Lock{Kind: runtime.Mutex, Key: key, Lease: lease}
}

// Mutual exclusion, fences, wake-ups and clean-up on 3 and 5 servers are
// the conformance suite's (backendtest, TestQuorum); contend is the same
// load for the fault tests.

// contend runs 3 Lockers of 3 goroutines, each taking the lock rounds
// times to increment a counter, and checks that no update was lost, no two
// holders overlapped, and fences rose from holder to holder.
func contend(t *testing.T, q *deployments, rounds int) {
	t.Helper()
	const lockers, goroutines = 3, 3
	var (
		// counter and lastFence are read and written separately (atomics
		// only so the race detector, which cannot see the order Redis
		// imposes, stays quiet): only the quorum lock keeps an update from
		// being lost.
		counter, lastFence atomic.Int64
		completed          atomic.Int64 // increments made
		inside, overlaps   atomic.Int32
		fenceErrs          atomic.Int32
	)
	ctx := backendtest.Timeout(t, 2*time.Minute)
	var wg sync.WaitGroup
	errs := make(chan error, lockers*goroutines)
	for range lockers {
		l := q.locker(t)
		for range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range rounds {
					held, err := l.Acquire(ctx, mutexLock("counter", 5*time.Second))
					if err != nil {
						errs <- err
						return
					}
					if inside.Add(1) != 1 {
						overlaps.Add(1)
					}
					fence, _ := runtime.Fence(held.Context())
					if fence <= lastFence.Load() {
						fenceErrs.Add(1)
					}
					lastFence.Store(fence)
					v := counter.Load()
					time.Sleep(time.Millisecond) // widen the window a lost update needs
					counter.Store(v + 1)
					completed.Add(1)
					inside.Add(-1)
					if err := held.Release(); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("acquire/release: %v", err)
	}
	if got, want := counter.Load(), completed.Load(); got != want {
		t.Errorf("counter = %d after %d increments: %d updates lost", got, want, want-got)
	}
	if overlaps.Load() != 0 || fenceErrs.Load() != 0 {
		t.Errorf("%d overlapping holders, %d fences not above the previous holder's", overlaps.Load(), fenceErrs.Load())
	}
}

// A quorum Locker takes only mutexes; its constructor checks its input.
func TestQuorumRefuses(t *testing.T) {
	q := startQuorum(t, 3)
	l := q.locker(t)
	for _, k := range []runtime.Kind{runtime.Fair, runtime.Read, runtime.Write, runtime.Semaphore} {
		lk := runtime.Lock{Kind: k, Key: "x"}
		if k == runtime.Semaphore {
			lk.Permits = 2
		}
		_, err := l.Acquire(context.Background(), lk)
		if !errors.Is(err, runtime.ErrInvalidLock) || !strings.Contains(err.Error(), "kind "+k.String()+" is not supported on a quorum Locker") {
			t.Errorf("%s on a quorum Locker: %v, want ErrInvalidLock naming the kind", k, err)
		}
	}
	if _, err := quorum.New(q.clients[:2]); !errors.Is(err, runtime.ErrInvalidLock) {
		t.Errorf("quorum.New with 2 clients: %v, want ErrInvalidLock", err)
	}
	if _, err := quorum.New([]redis.UniversalClient{q.clients[0], nil, q.clients[2]}); !errors.Is(err, runtime.ErrInvalidLock) {
		t.Errorf("quorum.New with a nil client: %v, want ErrInvalidLock", err)
	}
	if _, err := quorum.New(q.clients, runtime.WithReplicas(1, time.Second)); !errors.Is(err, runtime.ErrInvalidLock) {
		t.Errorf("quorum.New with WithReplicas: %v, want ErrInvalidLock", err)
	}
}

// A quorum release offers the lock to nobody: each server orders its
// waiters by arrival, so offers made server by server could name
// different waiters, none on a majority, and each would wait for its
// offers to lapse. The release leaves a tombstone on every server, clears
// the registrations and wakes every waiter. Here a registered waiter that
// never claims ("ghost", registered on each server by the acquire script
// itself) would otherwise be offered the lock on all three.
func TestQuorumReleaseOffersToNobody(t *testing.T) {
	q := startQuorum(t, 3)
	l := q.locker(t)
	ctx := backendtest.Timeout(t, time.Minute)
	h, err := l.Acquire(ctx, mutexLock("q", 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	key := q.prefix + "mutex:{q}"
	keys := []string{key, key + ":waiters", key + ":wake"}
	// Acquire returns once a majority granted the lock; under load the
	// third server's grant may come later, or be given back as too late,
	// and a ghost registering there would take the lock instead. The case
	// is about the servers where the holder holds it: a majority.
	var holding []redis.UniversalClient
	for _, c := range q.clients {
		if v := c.Get(ctx, key).Val(); v != "" && !strings.HasPrefix(v, "! ") {
			holding = append(holding, c)
		}
	}
	if len(holding) < 2 {
		t.Fatalf("the lock is held on %d servers of 3 after Acquire returned, want a majority", len(holding))
	}
	for i, c := range holding {
		r, err := c.Eval(ctx, lua.MutexAcquire.Source, keys, "ghost", 5000, "PUBLISH", 3000).Result()
		if err != nil {
			t.Fatalf("server %d: ghost registration: %v", i+1, err)
		}
		if _, isFence := r.(int64); isFence {
			t.Fatalf("server %d: ghost took the held lock: %v", i+1, r)
		}
		if n := c.ZCard(ctx, keys[1]).Val(); n != 1 {
			t.Fatalf("server %d: %d registrations, want the ghost's", i+1, n)
		}
	}
	if err := h.Release(); err != nil {
		t.Fatal(err)
	}
	for i, c := range holding {
		if v := c.Get(ctx, key).Val(); !strings.HasPrefix(v, "! ") {
			t.Errorf("server %d: %s = %q after the release, want a tombstone (no offer)", i+1, key, v)
		}
		if n := c.Exists(ctx, keys[1]).Val(); n != 0 {
			t.Errorf("server %d: the registrations outlived the release", i+1)
		}
	}
	// The lock is free at once, for any caller.
	if h, err := l.Acquire(ctx, runtime.Lock{Kind: runtime.Mutex, Key: "q", Wait: runtime.NoWait}); err != nil {
		t.Errorf("after the release: %v", err)
	} else if err := h.Release(); err != nil {
		t.Fatal(err)
	}
}
