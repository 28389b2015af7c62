package runtime_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/goredisbackend"
	"github.com/lockgen/lockgen/redistest"
	"github.com/lockgen/lockgen/runtime"
	"github.com/redis/go-redis/v9"
)

// payloads collects what a subscription delivers, without ever blocking
// the backend's receiving goroutine.
type payloads chan string

func (p payloads) deliver(payload string) {
	select {
	case p <- payload:
	default:
	}
}

// await waits for want and fails the test if it does not come within d;
// other payloads are skipped.
func (p payloads) await(t *testing.T, want string, d time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	deadline := time.After(d)
	for {
		select {
		case got := <-p:
			if got == want {
				return time.Since(start)
			}
		case <-deadline:
			t.Fatalf("no %q delivered within %v", want, d)
		}
	}
}

// slotOf returns the Cluster hash slot of key, from the server.
func slotOf(t *testing.T, rdb *redis.ClusterClient, key string) int {
	t.Helper()
	slot, err := rdb.ClusterKeySlot(context.Background(), key).Result()
	if err != nil {
		t.Fatal(err)
	}
	return int(slot)
}

// otherMaster returns a master of cl other than addr.
func otherMaster(t *testing.T, cl *redistest.Cluster, addr string) string {
	t.Helper()
	for _, a := range cl.Addrs {
		if a != addr {
			return a
		}
	}
	t.Fatalf("no master other than %s", addr)
	return ""
}

// spublish publishes payload on channel through the node at addr itself
// (no redirection) and returns how many subscribers it reached.
func spublish(t *testing.T, addr, channel, payload string) int64 {
	t.Helper()
	node := redis.NewClient(&redis.Options{Addr: addr})
	defer node.Close()
	n, err := node.SPublish(context.Background(), channel, payload).Result()
	if err != nil {
		t.Fatalf("SPUBLISH on %s: %v", addr, err)
	}
	return n
}

// A Cluster shard subscription follows its slot: when the slot moves, the
// old owner's SUNSUBSCRIBE reaches deliver as PayloadUnsubscribed, and a
// new Subscribe lands on the new owner. A Subscribe whose slot moved
// behind the backend's back is redirected (MOVED) to the new owner, and
// channels of several slots on one node survive a reconnection, which
// go-redis resubscribes in one command the node refuses (CROSSSLOT).
func TestSlotMoves(t *testing.T) {
	t.Parallel()
	cl := redistest.StartCluster(t, 3)
	rdb := cl.Client(t)
	b := goredisbackend.New(rdb)
	t.Cleanup(func() { b.Close() })

	t.Run("subscription ended by the old owner", func(t *testing.T) {
		ctx := ctxTimeout(t, 30*time.Second)
		const channel = "slotmove:{ended}"
		slot := slotOf(t, rdb, channel)
		from, err := cl.SlotOwner(ctx, slot)
		if err != nil {
			t.Fatal(err)
		}
		got := make(payloads, 16)
		unsubscribe, err := b.Subscribe(ctx, channel, got.deliver)
		if err != nil {
			t.Fatal(err)
		}
		if n := spublish(t, from, channel, "before"); n != 1 {
			t.Fatalf("SPUBLISH on the owner reached %d subscribers, want 1", n)
		}
		got.await(t, "before", 3*time.Second)

		to := otherMaster(t, cl, from)
		moving := time.Now()
		if err := cl.MoveSlot(ctx, slot, to); err != nil {
			t.Fatal(err)
		}
		moved := time.Since(moving)
		took := got.await(t, backend.PayloadUnsubscribed, 5*time.Second)
		t.Logf("slot %d moved from %s to %s in %v; PayloadUnsubscribed %v after the move returned", slot, from, to, moved.Round(time.Microsecond), took.Round(time.Microsecond))
		unsubscribe() // the server ended it already: nothing to do, nothing to break

		again := make(payloads, 16)
		if _, err := b.Subscribe(ctx, channel, again.deliver); err != nil {
			t.Fatalf("subscribe after the move: %v", err)
		}
		if n := spublish(t, to, channel, "after"); n != 1 {
			t.Fatalf("SPUBLISH on the new owner reached %d subscribers, want 1", n)
		}
		again.await(t, "after", 3*time.Second)
	})

	t.Run("subscribe redirected by MOVED", func(t *testing.T) {
		ctx := ctxTimeout(t, 30*time.Second)
		const channel = "slotmove:{unseen}"
		slot := slotOf(t, rdb, channel) // the client has its slot map now
		from, err := cl.SlotOwner(ctx, slot)
		if err != nil {
			t.Fatal(err)
		}
		to := otherMaster(t, cl, from)
		if err := cl.MoveSlot(ctx, slot, to); err != nil {
			t.Fatal(err)
		}
		got := make(payloads, 16)
		start := time.Now()
		if _, err := b.Subscribe(ctx, channel, got.deliver); err != nil {
			t.Fatalf("subscribe after the slot moved unseen: %v", err)
		}
		t.Logf("subscribed on the new owner %v after the MOVED", time.Since(start).Round(time.Microsecond))
		if n := spublish(t, to, channel, "moved"); n != 1 {
			t.Fatalf("SPUBLISH on the new owner reached %d subscribers, want 1", n)
		}
		got.await(t, "moved", 3*time.Second)
	})

	t.Run("channels of several slots after a reconnection", func(t *testing.T) {
		ctx := ctxTimeout(t, 30*time.Second)
		// Two channels on one master, in different slots.
		var channels []string
		var owner string
		for i := 0; len(channels) < 2 && i < 200; i++ {
			ch := "slotmove:{multi" + strconv.Itoa(i) + "}"
			o, err := cl.SlotOwner(ctx, slotOf(t, rdb, ch))
			if err != nil {
				t.Fatal(err)
			}
			if owner == "" {
				owner = o
			}
			if o == owner {
				channels = append(channels, ch)
			}
		}
		if len(channels) < 2 {
			t.Fatal("no two channels on one master among 200")
		}
		got := []payloads{make(payloads, 16), make(payloads, 16)}
		for i, ch := range channels {
			if _, err := b.Subscribe(ctx, ch, got[i].deliver); err != nil {
				t.Fatal(err)
			}
		}
		node := redis.NewClient(&redis.Options{Addr: owner})
		defer node.Close()
		if err := node.Do(ctx, "CLIENT", "KILL", "TYPE", "pubsub").Err(); err != nil {
			t.Fatal(err)
		}
		for i, ch := range channels {
			got[i].await(t, backend.PayloadUnsubscribed, 5*time.Second)
			if _, err := b.Subscribe(ctx, ch, got[i].deliver); err != nil {
				t.Fatalf("subscribe %s again: %v", ch, err)
			}
		}
		for i, ch := range channels {
			if n := spublish(t, owner, ch, "back"); n != 1 {
				t.Fatalf("SPUBLISH %s reached %d subscribers, want 1", ch, n)
			}
			got[i].await(t, "back", 3*time.Second)
		}
	})
}

// Waiters on a Cluster whose lock's slot moves to another master while they
// sleep: the old owner's unrequested SUNSUBSCRIBE wakes them, they find the
// lock still busy (their calls follow MOVED) and subscribe again on the new
// owner, where the holder's release (following MOVED too) wakes them. Their
// retry timers (mutex window/3, fair heartbeat 2/3 lease: 20s) and the lease
// (30s) are far too long to let them in within the seconds allowed here.
func TestWaitersFollowTheirSlotToAnotherMaster(t *testing.T) {
	t.Parallel()
	cl := redistest.StartCluster(t, 3)
	rdb := cl.Client(t)
	prefix := uniquePrefix(t)
	newLocker := func(opts ...runtime.Option) *runtime.Locker {
		l := runtime.New(rdb, append([]runtime.Option{runtime.WithKeyPrefix(prefix), runtime.WithWaiterWindow(30 * time.Second)}, opts...)...)
		t.Cleanup(func() { l.Close() })
		return l
	}
	observeMutex, busyMutex := busySignal()
	observeFair, busyFair := busySignal()
	holder := newLocker()
	mutexWaiter, fairWaiter := newLocker(runtime.WithObserver(observeMutex)), newLocker(runtime.WithObserver(observeFair))
	ctx := ctxTimeout(t, 30*time.Second)

	// The mutex and the fair lock of one key share its slot.
	mutex := runtime.Lock{Kind: runtime.Mutex, Key: "moving", Lease: 30 * time.Second}
	fair := runtime.Lock{Kind: runtime.Fair, Key: "moving", Lease: 30 * time.Second}
	h, err := holder.Acquire(ctx, mutex, fair)
	if err != nil {
		t.Fatal(err)
	}
	gotMutex := acquireAsync(ctx, mutexWaiter, mutex)
	gotFair := acquireAsync(ctx, fairWaiter, fair)
	waitBusy(t, busyMutex, 2) // attempt, subscribe, attempt: asleep
	waitBusy(t, busyFair, 2)

	slot := slotOf(t, rdb, prefix+"mutex:{moving}")
	from, err := cl.SlotOwner(ctx, slot)
	if err != nil {
		t.Fatal(err)
	}
	to := otherMaster(t, cl, from)
	moving := time.Now()
	if err := cl.MoveSlot(ctx, slot, to); err != nil {
		t.Fatal(err)
	}
	// Woken by the SUNSUBSCRIBE: busy again, subscribed again, busy again.
	waitBusy(t, busyMutex, 2)
	waitBusy(t, busyFair, 2)
	t.Logf("slot %d moved from %s to %s; both waiters subscribed again %v after the move began", slot, from, to, time.Since(moving).Round(time.Millisecond))
	node := redis.NewClient(&redis.Options{Addr: to})
	defer node.Close()
	for _, family := range []string{"mutex", "fair"} {
		channel := prefix + family + ":{moving}:wake"
		n, err := node.PubSubShardNumSub(ctx, channel).Result()
		if err != nil {
			t.Fatal(err)
		}
		if n[channel] != 1 {
			t.Errorf("%s has %d subscribers on the new owner %s, want 1", channel, n[channel], to)
		}
	}

	released := time.Now()
	if err := h.Release(); err != nil {
		t.Fatalf("release after the slot moved: %v", err)
	}
	const woken = 3 * time.Second
	for name, got := range map[string]<-chan acquired{"mutex waiter": gotMutex, "fair waiter": gotFair} {
		select {
		case a := <-got:
			if a.err != nil {
				t.Fatalf("%s: %v", name, a.err)
			}
			t.Logf("%s granted %v after the release", name, a.at.Sub(released).Round(time.Microsecond))
			if err := a.h.Release(); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		case <-time.After(woken):
			t.Fatalf("%s not granted within %v of the release (retry timers 10s, lease 30s)", name, woken)
		}
	}
}
