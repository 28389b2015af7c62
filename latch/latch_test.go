package latch_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockgen/lockgen/embedded"
	"github.com/lockgen/lockgen/latch"
	"github.com/lockgen/lockgen/lua"
	"github.com/lockgen/lockgen/luashim"
	"github.com/lockgen/lockgen/redistest"
	"github.com/lockgen/lockgen/runtime"
)

// What one latch promises, on every target: set once, a party counts once,
// an open latch stays open, and misuse gets sentinel errors.
func TestLatchOperations(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		ctx := ctxTimeout(t, 10*time.Second)
		a, b := tg.newLocker(t), tg.newLocker(t)
		la, lb := latch.New(a, "shards"), latch.New(b, "shards")

		if _, err := la.CountDown(ctx); !errors.Is(err, latch.ErrNoLatch) {
			t.Fatalf("CountDown before TrySetCount: %v, want ErrNoLatch", err)
		}
		if err := la.Await(ctx); err != nil {
			t.Fatalf("Await on no latch: %v, want nil at once (as Redisson)", err)
		}
		if ok, err := la.TrySetCount(ctx, 3); !ok || err != nil {
			t.Fatalf("TrySetCount: %v, %v", ok, err)
		}
		if ok, err := lb.TrySetCount(ctx, 5); ok || err != nil {
			t.Fatalf("second TrySetCount: %v, %v; want false: the latch exists", ok, err)
		}
		for i, want := range []int64{2, 2, 2} { // one party, counted once
			if n, err := lb.CountDownAs(ctx, "shard-1"); n != want || err != nil {
				t.Fatalf("CountDownAs(shard-1) #%d = %d, %v; want %d", i+1, n, err, want)
			}
		}
		if n, err := la.CountDown(ctx); n != 1 || err != nil {
			t.Fatalf("CountDown = %d, %v; want 1", n, err)
		}
		if n, err := lb.Count(ctx); n != 1 || err != nil {
			t.Fatalf("Count = %d, %v; want 1", n, err)
		}
		if n, err := la.CountDown(ctx); n != 0 || err != nil {
			t.Fatalf("last CountDown = %d, %v; want 0", n, err)
		}
		if n, err := lb.CountDownAs(ctx, "shard-9"); n != 0 || err != nil {
			t.Fatalf("CountDownAs on an open latch = %d, %v; want 0", n, err)
		}
		if err := lb.Await(ctx); err != nil {
			t.Fatalf("late Await: %v", err)
		}
		if ok, err := lb.TrySetCount(ctx, 2); ok || err != nil {
			t.Fatalf("TrySetCount on an open latch: %v, %v; want false (one-shot)", ok, err)
		}

		bad := []struct {
			name string
			err  error
			want error
		}{
			{"key with a brace", latch.New(a, "x{y}").Await(ctx), runtime.ErrInvalidKey},
			{"empty key", func() error { _, err := latch.New(a, "").Count(ctx); return err }(), runtime.ErrInvalidKey},
			{"TTL 0", func() error { _, err := latch.New(a, "k", latch.WithTTL(0)).CountDown(ctx); return err }(), runtime.ErrInvalidLock},
			{"count 0", func() error { _, err := latch.New(a, "k").TrySetCount(ctx, 0); return err }(), runtime.ErrInvalidLock},
			{"count 2^31+1", func() error { _, err := latch.New(a, "k").TrySetCount(ctx, 1<<31+1); return err }(), runtime.ErrInvalidLock},
			{"party with a space", func() error { _, err := la.CountDownAs(ctx, "shard 1"); return err }(), runtime.ErrInvalidLock},
		}
		for _, c := range bad {
			if !errors.Is(c.err, c.want) {
				t.Errorf("%s: %v, want %v", c.name, c.err, c.want)
			}
		}
		a.Close()
		if _, err := la.Count(ctx); !errors.Is(err, runtime.ErrClosed) {
			t.Errorf("Count on a closed Locker: %v, want ErrClosed", err)
		}
	})
}

// Every awaiter of every Locker is released by the one message of the last
// count-down (Redisson #5349 woke only the first async one): with the
// default TTL an awaiter re-checks only every 5 s, so release within 2 s
// of the count-down is the message's doing.
func TestLatchWakesEveryAwaiter(t *testing.T) {
	const perLocker = 10
	tg := redisTarget(t)
	ctx := ctxTimeout(t, 30*time.Second)
	setter := tg.newLocker(t)
	lt := latch.New(setter, "wake-all")
	if ok, err := lt.TrySetCount(ctx, 1); !ok || err != nil {
		t.Fatalf("TrySetCount: %v, %v", ok, err)
	}
	released := make(chan time.Time, 2*perLocker)
	errs := make(chan error, 2*perLocker)
	var wg sync.WaitGroup
	for range 2 {
		l := tg.newLocker(t)
		for range perLocker {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := latch.New(l, "wake-all").Await(ctx); err != nil {
					errs <- err
					return
				}
				released <- time.Now()
			}()
		}
	}
	waitSubscribers(t, tg.do, "@latch:{wake-all}:wake", 2)
	sent := time.Now()
	if n, err := lt.CountDown(ctx); n != 0 || err != nil {
		t.Fatalf("CountDown = %d, %v", n, err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("Await: %v", err)
	}
	close(released)
	var last time.Duration
	n := 0
	for at := range released {
		n++
		last = max(last, at.Sub(sent))
	}
	t.Logf("%d awaiters in 2 Lockers, the last released %v after the count-down was sent", n, last)
	if n != 2*perLocker || last > 2*time.Second {
		t.Errorf("%d awaiters released, the last after %v; want %d within 2s", n, last, 2*perLocker)
	}
}

// waitSubscribers waits until n connections subscribe to channel, asking
// with do (a target's do: its "@" prefix rewriting applies).
func waitSubscribers(t *testing.T, do func(testing.TB, ...string) (any, error), channel string, n int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		v, err := do(t, "PUBSUB", "NUMSUB", channel)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := v.([]any); len(got) == 2 && got[1] == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("PUBSUB NUMSUB %s = %v after 10s, want %d", channel, v, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// An open latch stays for one TTL after its last use, and then no key of
// it is left; in the shim, with a virtual clock.
func TestLatchLeavesNoKeysAfterItsTTL(t *testing.T) {
	clock := luashim.NewVirtualClock(time.Now())
	b := embedded.NewBackend(luashim.New(clock))
	l := runtime.NewWithBackend(b)
	defer l.Close()
	ctx := ctxTimeout(t, 10*time.Second)
	lt := latch.New(l, "drain", latch.WithTTL(time.Minute))
	if ok, err := lt.TrySetCount(ctx, 2); !ok || err != nil {
		t.Fatalf("TrySetCount: %v, %v", ok, err)
	}
	for _, p := range []string{"a", "b", "a"} {
		if _, err := lt.CountDownAs(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	clock.Advance(59 * time.Second)
	if err := lt.Await(ctx); err != nil { // late, and a use: the TTL restarts
		t.Fatal(err)
	}
	clock.Advance(59 * time.Second)
	if len(b.Server().Snapshot()) == 0 {
		t.Fatal("the open latch is gone less than a TTL after its last use")
	}
	clock.Advance(2 * time.Second)
	if keys := b.Server().Snapshot(); len(keys) != 0 {
		t.Fatalf("keys left one TTL after the last use: %v", keys)
	}
	if _, err := lt.CountDown(ctx); !errors.Is(err, latch.ErrNoLatch) {
		t.Fatalf("CountDown after expiry: %v, want ErrNoLatch", err)
	}
	if keys := b.Server().Snapshot(); len(keys) != 0 {
		t.Fatalf("a CountDown on no latch wrote %v", keys)
	}
}

// On redis-server with a short TTL: an awaiter keeps a latch alive (its
// re-checks are uses); once nobody uses it, no key is left after a TTL, and
// a party that comes too late is told.
func TestLatchExpiresOnRedis(t *testing.T) {
	const ttl = 3 * time.Second // re-checks every second: 2 s of slack for a busy machine
	tg := redisTarget(t)
	l := tg.newLocker(t)
	lt := latch.New(l, "short", latch.WithTTL(ttl))
	ctx := ctxTimeout(t, 30*time.Second)
	if ok, err := lt.TrySetCount(ctx, 2); !ok || err != nil {
		t.Fatalf("TrySetCount: %v, %v", ok, err)
	}
	actx, cancel := context.WithTimeout(ctx, ttl*3/2)
	err := lt.Await(actx)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Await on a latch nobody counts down: %v, want the context's deadline", err)
	}
	if n, err := lt.Count(ctx); n != 2 || err != nil {
		t.Fatalf("after an Await longer than the TTL, Count = %d, %v; want 2 (the awaiter kept it)", n, err)
	}
	gone := time.Now().Add(ttl + 5*time.Second)
	for {
		v, err := tg.do(t, "PTTL", "@latch:{short}")
		if err != nil {
			t.Fatal(err)
		}
		if v == int64(-2) { // no such key
			break
		}
		if time.Now().After(gone) {
			t.Fatalf("latch still there %v after its last use (TTL %v)", ttl+5*time.Second, ttl)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := lt.CountDown(ctx); !errors.Is(err, latch.ErrNoLatch) {
		t.Fatalf("CountDown after expiry: %v, want ErrNoLatch", err)
	}
	for _, k := range []string{"@latch:{short}", "@latch:{short}:wake"} {
		if v, err := tg.do(t, "PTTL", k); v != int64(-2) || err != nil {
			t.Fatalf("PTTL %s after a CountDown on no latch: %v, %v; want -2 (no key)", k, v, err)
		}
	}
}

// An awaiter whose latch expires without opening is told, rather than
// waiting for a latch that will never open.
func TestLatchAwaitReportsExpiry(t *testing.T) {
	tg := redisTarget(t)
	l := tg.newLocker(t)
	lt := latch.New(l, "lost", latch.WithTTL(30*time.Second))
	ctx := ctxTimeout(t, 20*time.Second)
	if ok, err := lt.TrySetCount(ctx, 1); !ok || err != nil {
		t.Fatalf("TrySetCount: %v, %v", ok, err)
	}
	done := make(chan error, 1)
	go func() { done <- lt.Await(ctx) }()
	waitSubscribers(t, tg.do, "@latch:{lost}:wake", 1)
	// As if nobody had used it for a TTL; the message wakes the awaiter
	// at once instead of at its next re-check.
	if _, err := tg.do(t, "DEL", "@latch:{lost}"); err != nil {
		t.Fatal(err)
	}
	if _, err := tg.do(t, "PUBLISH", "@latch:{lost}:wake", "all"); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, latch.ErrNoLatch) {
		t.Fatalf("Await of an expired latch: %v, want ErrNoLatch", err)
	}
}

// On a 3-master Cluster: the latch's keys share one slot (its hash tag),
// and the last count-down's SPUBLISH releases awaiters of other Lockers
// well before their 5 s re-check.
func TestLatchCluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	rdb := cl.Client(t)
	prefix := uniquePrefix(t)
	newLocker := func() *runtime.Locker {
		l := runtime.New(rdb, runtime.WithKeyPrefix(prefix))
		t.Cleanup(func() { l.Close() })
		return l
	}
	ctx := ctxTimeout(t, 30*time.Second)
	setter := newLocker()
	for _, key := range []string{"a", "b", "c", "d"} { // keys on several masters
		lt := latch.New(setter, key)
		if ok, err := lt.TrySetCount(ctx, 2); !ok || err != nil {
			t.Fatalf("%s: TrySetCount: %v, %v", key, ok, err)
		}
		done := make(chan error, 2)
		for range 2 {
			l := newLocker()
			go func() { done <- latch.New(l, key).Await(ctx) }()
		}
		if err := waitClusterSubscribers(ctx, rdb, prefix+"latch:{"+key+"}:wake", 2); err != nil {
			t.Fatal(err)
		}
		if left, err := lt.CountDownAs(ctx, "p0"); left != 1 || err != nil {
			t.Fatalf("%s: first CountDownAs = %d, %v; want 1", key, left, err)
		}
		sent := time.Now()
		if left, err := lt.CountDownAs(ctx, "p1"); left != 0 || err != nil {
			t.Fatalf("%s: last CountDownAs = %d, %v; want 0", key, left, err)
		}
		for range 2 {
			if err := <-done; err != nil {
				t.Fatalf("%s: Await: %v", key, err)
			}
		}
		took := time.Since(sent)
		t.Logf("latch %s on %s: both awaiters released %v after the count-down", key, redistest.MasterOf(t, rdb, prefix+"latch:{"+key+"}"), took)
		if took > 2*time.Second {
			t.Errorf("%s: awaiters released %v after the count-down, want within 2s", key, took)
		}
	}
}

// waitClusterSubscribers waits until n connections of the channel's shard
// subscribe to it (PUBSUB SHARDNUMSUB, asked of the master of its slot).
func waitClusterSubscribers(ctx context.Context, rdb *redis.ClusterClient, channel string, n int64) error {
	for {
		got, err := rdb.PubSubShardNumSub(ctx, channel).Result()
		if err != nil {
			return err
		}
		if got[channel] == n {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("PUBSUB SHARDNUMSUB %s = %d, want %d: %w", channel, got[channel], n, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// go-redis resends a command whose connection dropped (MaxRetries defaults
// to 3): the proxy forwards the count-down and cuts the connection before
// the reply, the server has run it, the client runs it again. It counts
// once, since the resent call carries the same party id.
func TestLatchCountDownRetriedByTheClientCountsOnce(t *testing.T) {
	p := redistest.StartProxy(t, redisServer(t).Addr)
	prefix := uniquePrefix(t)
	direct := runtime.New(redisClient(t), runtime.WithKeyPrefix(prefix))
	defer direct.Close()
	viaProxy := redis.NewClient(&redis.Options{Addr: p.Addr})
	defer viaProxy.Close()
	l := runtime.New(viaProxy, runtime.WithKeyPrefix(prefix))
	defer l.Close()
	ctx := ctxTimeout(t, 20*time.Second)
	if ok, err := latch.New(direct, "retried").TrySetCount(ctx, 3); !ok || err != nil {
		t.Fatalf("TrySetCount: %v, %v", ok, err)
	}
	// Loaded, so that the EVALSHA cut is the one that runs the script.
	if err := redisClient(t).ScriptLoad(ctx, lua.LatchCountDown.Source).Err(); err != nil {
		t.Fatal(err)
	}
	lt := latch.New(l, "retried")
	fired := p.CloseAfterNext("EVALSHA")
	left, err := lt.CountDown(ctx)
	select {
	case <-fired:
	case <-time.After(10 * time.Second):
		t.Fatal("the proxy did not cut a connection after an EVALSHA within 10s")
	}
	if err != nil || left != 2 {
		t.Fatalf("CountDown cut after the request and resent = %d, %v; want 2", left, err)
	}
	if n, err := latch.New(direct, "retried").Count(ctx); n != 2 || err != nil {
		t.Fatalf("Count = %d, %v; want 2: the resent count-down counted again", n, err)
	}
}

// A lost wake message costs at most one re-check: the latch opened behind
// the awaiter's back (no message) is seen within min(TTL/3, 5 s).
func TestLatchAwaitRechecksWithoutAMessage(t *testing.T) {
	const ttl = 3 * time.Second // re-checks every second
	tg := redisTarget(t)
	l := tg.newLocker(t)
	lt := latch.New(l, "quiet", latch.WithTTL(ttl))
	ctx := ctxTimeout(t, 30*time.Second)
	if ok, err := lt.TrySetCount(ctx, 1); !ok || err != nil {
		t.Fatalf("TrySetCount: %v, %v", ok, err)
	}
	done := make(chan error, 1)
	go func() { done <- lt.Await(ctx) }()
	waitSubscribers(t, tg.do, "@latch:{quiet}:wake", 1)
	if _, err := tg.do(t, "HSET", "@latch:{quiet}", "c", "0"); err != nil {
		t.Fatal(err)
	}
	opened := time.Now()
	select {
	case err := <-done:
		took := time.Since(opened)
		t.Logf("awaiter saw the silent opening after %v (re-check every %v)", took, ttl/3)
		if err != nil {
			t.Fatalf("Await: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the awaiter missed an opening without a message for 10s (re-check every %v)", ttl/3)
	}
}
