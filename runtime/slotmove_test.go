package runtime_test

import (
	"context"
	"strconv"
	"testing"
	"time"

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
	cl := redistest.StartCluster(t, 3)
	rdb := cl.Client(t)
	b := runtime.NewGoRedisBackend(rdb)
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
		took := got.await(t, runtime.PayloadUnsubscribed, 5*time.Second)
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
			got[i].await(t, runtime.PayloadUnsubscribed, 5*time.Second)
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
