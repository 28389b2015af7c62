package quorum_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/goredisbackend"
	"github.com/redis/go-redis/v9"

	"github.com/lockgen/lockgen/backendtest"
	"github.com/lockgen/lockgen/lua"
	"github.com/lockgen/lockgen/quorum"
	"github.com/lockgen/lockgen/redistest"
	"github.com/lockgen/lockgen/runtime"
)

// A waiter is woken by the release, not by its retry timer: with a 30 s
// lease it would retry only when the holder's lease would end.
// It subscribes on every server that is up, so this holds with one of 3
// down too.
func TestQuorumWaiterWokenByRelease(t *testing.T) {
	for _, down := range []int{0, 1} {
		t.Run(map[int]string{0: "all up", 1: "one down"}[down], func(t *testing.T) {
			q := startQuorum(t, 3)
			if down == 1 {
				q.servers[2].Kill()
			}
			observe, busy := backendtest.BusySignal()
			holder := q.locker(t, runtime.WithWaiterWindow(30*time.Second))
			waiter := q.locker(t, runtime.WithWaiterWindow(30*time.Second), observe)
			wokenByRelease(t, holder, waiter, busy, "w")
		})
	}
}

// deafBackend confirms every subscription and delivers nothing.
type deafBackend struct{ backend.Backend }

func (deafBackend) Subscribe(ctx context.Context, channel string, deliver func(string)) (func(), error) {
	return func() {}, nil
}

// A member of the quorum may be a Cluster: its scripts publish with
// SPUBLISH, the others' with PUBLISH. Here the two single servers deliver
// no messages, so only the Cluster's SPUBLISH can wake the waiter before
// its retry timer.
func TestQuorumClusterMemberWakes(t *testing.T) {
	a, b := redistest.Start(t), redistest.Start(t)
	cl := redistest.StartCluster(t, 3)
	backends := []backend.Backend{
		deafBackend{goredisbackend.New(a.Client(t))},
		deafBackend{goredisbackend.New(b.Client(t))},
		goredisbackend.New(cl.Client(t)),
	}
	// The holder's release reaches the Cluster only once both single
	// servers have answered theirs. Otherwise, under load, the waiter woken
	// by the Cluster may find a single server still held, fall short of a
	// majority, and wait for the single servers' messages, which the deaf
	// backends never deliver: the test would then time the race, not the
	// wake-up.
	aReleased, bReleased := make(chan struct{}), make(chan struct{})
	holderBackends := []backend.Backend{
		releaseSignal{backends[0], onceCloser(aReleased)},
		releaseSignal{backends[1], onceCloser(bReleased)},
		releasesAfter(backends[2], aReleased, bReleased),
	}
	newLockerOn := func(backends []backend.Backend, opts ...runtime.Option) *runtime.Locker {
		l, err := quorum.NewWithBackends(backends, append([]runtime.Option{runtime.WithWaiterWindow(30 * time.Second)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		return l
	}
	observe, busy := backendtest.BusySignal()
	// A quorum's subscription and its busy reply come once a majority
	// answered (here the two deaf servers): the release must come once the
	// Cluster has the waiter's shard channel and its registration too (its
	// attempt there may still be on the way), or nothing can wake it.
	shardSubscribed := func() {
		rdb := cl.Client(t)
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			var mu sync.Mutex
			n := 0
			_ = rdb.ForEachMaster(context.Background(), func(ctx context.Context, c *redis.Client) error {
				chans, err := c.PubSubShardChannels(ctx, "lockgen:*").Result()
				mu.Lock()
				n += len(chans)
				mu.Unlock()
				return err
			})
			registered, _ := rdb.ZCard(context.Background(), "lockgen:mutex:{c}:waiters").Result()
			if n > 0 && registered > 0 {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatal("the waiter's shard channel or registration is not on the Cluster 10 s after its busy reply")
	}
	holder, waiter := newLockerOn(holderBackends), newLockerOn(backends, observe)
	// Registered after the Lockers, so it runs before they close.
	rdb := cl.Client(t)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the Cluster at the end: %s", clusterState(rdb, "c"))
		}
	})
	// The holder's lock must be on the Cluster too, or the waiter's
	// attempts there take it (and give it back) rather than register.
	onCluster := func() bool {
		deadline := time.Now().Add(2 * time.Second)
		for time.Now().Before(deadline) {
			v, err := rdb.Get(context.Background(), "lockgen:mutex:{c}").Result()
			if err == nil && !strings.HasPrefix(v, "! ") {
				return true
			}
			time.Sleep(10 * time.Millisecond)
		}
		return false
	}
	wokenByReleaseOf(t, holder, waiter, busy, "c", onCluster, shardSubscribed)
}

// clusterState describes what a Cluster holds for the mutex on key, for a
// failure's message: its value, its waiters and the wake channel's
// subscribers on each master.
func clusterState(rdb *redis.ClusterClient, key string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var mu sync.Mutex
	var out []string
	_ = rdb.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
		keys, _ := c.Keys(ctx, "*").Result()
		line := fmt.Sprintf("%s: keys %q", c.Options().Addr, keys)
		for _, k := range keys {
			switch typ, _ := c.Type(ctx, k).Result(); typ {
			case "string":
				v, _ := c.Get(ctx, k).Result()
				line += fmt.Sprintf(" %s=%q", k, v)
			case "zset":
				m, _ := c.ZRangeWithScores(ctx, k, 0, -1).Result()
				line += fmt.Sprintf(" %s=%v", k, m)
			}
		}
		chans, _ := c.PubSubShardChannels(ctx, "*").Result()
		for _, ch := range chans {
			n, _ := c.PubSubShardNumSub(ctx, ch).Result()
			line += fmt.Sprintf(" shard channel %s subscribers %v", ch, n[ch])
		}
		mu.Lock()
		out = append(out, line)
		mu.Unlock()
		return nil
	})
	return strings.Join(out, "; ")
}

// onceCloser returns a function that closes ch the first time it is called.
func onceCloser(ch chan struct{}) func() {
	var once sync.Once
	return func() { once.Do(func() { close(ch) }) }
}

// releaseSignal calls released once a mutex release has been answered.
type releaseSignal struct {
	backend.Backend
	released func()
}

func (r releaseSignal) Eval(ctx context.Context, c backend.Call) (any, error) {
	v, err := r.Backend.Eval(ctx, c)
	if c.Script == lua.MutexRelease {
		r.released()
	}
	return v, err
}

func (r releaseSignal) EvalBatch(ctx context.Context, calls []backend.Call) []backend.Reply {
	replies := r.Backend.EvalBatch(ctx, calls)
	for _, c := range calls {
		if c.Script == lua.MutexRelease {
			r.released()
		}
	}
	return replies
}

// releasesAfter holds b's mutex releases back until every channel of
// before is closed (or ctx ends).
func releasesAfter(b backend.Backend, before ...<-chan struct{}) backend.Backend {
	return releaseGate{b, func(ctx context.Context) {
		for _, ch := range before {
			select {
			case <-ch:
			case <-ctx.Done():
				return
			}
		}
	}}
}

// wokenByRelease: holder takes a mutex with a 30 s lease, waiter waits for
// it (busy reports its busy replies; the second comes after it subscribed),
// and after the release the waiter must have the lock within 15 s, well
// before its retry timer (the holder's lease left, about 30 s). The slack is
// for a loaded CI machine; a wake-up takes milliseconds.
//
// ready, if given, runs between the waiter's second busy reply and the
// release.
func wokenByRelease(t *testing.T, holder, waiter *runtime.Locker, busy <-chan struct{}, key string, ready ...func()) {
	t.Helper()
	wokenByReleaseOf(t, holder, waiter, busy, key, nil, ready...)
}

// wokenByReleaseOf is wokenByRelease with a check of the hold: onServer
// reports whether the server that must wake the waiter holds the lock. A
// grant needs a majority only, and under load the rest may never get it;
// the holder then gives it back and takes it again, 3 times at most.
func wokenByReleaseOf(t *testing.T, holder, waiter *runtime.Locker, busy <-chan struct{}, key string, onServer func() bool, ready ...func()) {
	t.Helper()
	ctx := backendtest.Timeout(t, time.Minute)
	lock := runtime.Lock{Kind: runtime.Mutex, Key: key, Lease: 30 * time.Second, Wait: 20 * time.Second}
	var held *runtime.Held
	for attempt := 1; ; attempt++ {
		h, err := holder.Acquire(ctx, lock)
		if err != nil {
			t.Fatal(err)
		}
		if onServer == nil || onServer() {
			held = h
			break
		}
		h.Release()
		if attempt == 3 {
			t.Fatalf("the server that must wake the waiter did not hold the lock after %d grants", attempt)
		}
	}
	got := backendtest.AcquireAsync(ctx, waiter, lock)
	backendtest.WaitBusy(t, busy, 2)
	for _, f := range ready {
		f()
	}
	released := time.Now()
	if err := held.Release(); err != nil {
		t.Fatal(err)
	}
	select {
	case a := <-got:
		if a.Err != nil {
			t.Fatalf("waiter: %v", a.Err)
		}
		a.Held.Release()
		t.Logf("granted %v after the release", time.Since(released).Round(time.Millisecond))
	case <-time.After(15 * time.Second):
		t.Fatal("the waiter was not woken by the release within 15 s (its retry timer is about 30 s)")
	}
}
