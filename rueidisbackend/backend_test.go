package rueidisbackend_test

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"

	"github.com/lockgen/lockgen/backendtest"
	"github.com/lockgen/lockgen/lua"
	"github.com/lockgen/lockgen/redistest"
	"github.com/lockgen/lockgen/rueidisbackend"
	"github.com/lockgen/lockgen/runtime"
)

// The conformance suite runs through this backend on a single redis-server
// and on a Cluster of three masters, each Locker on a client of its own, as
// separate processes would have; the script cache flushed under a Locker is
// this backend's own scenario.

// target is one deployment the scenarios run on.
type target struct {
	name   string
	client func(t *testing.T) rueidis.Client
	admin  redis.UniversalClient // go-redis, for what the test checks on the server
}

func targets(t *testing.T) []target {
	srv := redistest.Start(t)
	cl := redistest.StartCluster(t, 3)
	admin := redis.NewClient(srv.Options())
	cadmin := redis.NewClusterClient(cl.Options())
	t.Cleanup(func() { admin.Close(); cadmin.Close() })
	return []target{
		{"server", func(t *testing.T) rueidis.Client { return newClient(t, srv.Addr) }, admin},
		{"cluster", func(t *testing.T) rueidis.Client { return newClient(t, cl.Addrs...) }, cadmin},
	}
}

func newClient(t *testing.T, addrs ...string) rueidis.Client {
	t.Helper()
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: addrs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func TestConformance(t *testing.T) {
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			backendtest.Run(t, backendtest.Target{
				NewLocker: func(t *testing.T, opts ...runtime.Option) *runtime.Locker {
					return rueidisbackend.NewLocker(tg.client(t), opts...)
				},
				Servers: []backend.Backend{rueidisbackend.New(tg.client(t))},
			})
			t.Run("ScriptFlushed", func(t *testing.T) { scriptFlushed(t, tg) })
		})
	}
}

// After SCRIPT FLUSH every call meets NOSCRIPT once and is sent as EVAL.
func scriptFlushed(t *testing.T, tg target) {
	l := rueidisbackend.NewLocker(tg.client(t))
	defer l.Close()
	ctx := ctxTimeout(t, 20*time.Second)
	lock := runtime.Lock{Kind: runtime.Mutex, Key: "flushed", Wait: runtime.NoWait}
	for i := range 2 {
		flush := func(ctx context.Context, c *redis.Client) error { return c.ScriptFlush(ctx).Err() }
		var err error
		if cc, ok := tg.admin.(*redis.ClusterClient); ok {
			err = cc.ForEachMaster(ctx, flush)
		} else {
			err = flush(ctx, tg.admin.(*redis.Client))
		}
		if err != nil {
			t.Fatal(err)
		}
		h, err := l.Acquire(ctx, lock)
		if err != nil {
			t.Fatalf("acquire %d after SCRIPT FLUSH: %v", i+1, err)
		}
		if err := h.Release(); err != nil {
			t.Fatalf("release %d: %v", i+1, err)
		}
	}
	// A release leaves a tombstone, "! <fence> 0", for the fence floor.
	if v, err := tg.admin.Get(ctx, "lockgen:mutex:{flushed}").Result(); err != nil || !strings.HasPrefix(v, "! ") {
		t.Fatalf("lock key after release: %q, %v; want a tombstone", v, err)
	}
}

// payloads collects what a subscription delivers, never blocking.
type payloads chan string

func (p payloads) deliver(s string) {
	select {
	case p <- s:
	default:
	}
}

func (p payloads) await(t *testing.T, want string, d time.Duration) {
	t.Helper()
	deadline := time.After(d)
	for {
		select {
		case got := <-p:
			if got == want {
				return
			}
		case <-deadline:
			t.Fatalf("no %q delivered within %v", want, d)
		}
	}
}

// A subscription delivers what is published after Subscribe returns; its
// unsubscribe tells the server; after a lost connection it is subscribed
// again and delivers "all" for the messages that may have been lost.
func TestSubscriptionLifecycle(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	b := rueidisbackend.New(newClient(t, srv.Addr))
	defer b.Close()
	ctx := ctxTimeout(t, 30*time.Second)
	if b.PublishCommand() != "PUBLISH" {
		t.Fatalf("PublishCommand %q on a single node", b.PublishCommand())
	}
	p := make(payloads, 16)
	unsub, err := b.Subscribe(ctx, "ch", p.deliver)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := admin.Publish(ctx, "ch", "grant:1:x").Result(); err != nil || n != 1 {
		t.Fatalf("PUBLISH reached %d subscribers, %v", n, err)
	}
	p.await(t, "grant:1:x", 5*time.Second)
	unsub()
	if n, err := admin.PubSubNumSub(ctx, "ch").Result(); err != nil || n["ch"] != 0 {
		t.Fatalf("after unsubscribe the server still has %d subscribers, %v", n["ch"], err)
	}

	if _, err = b.Subscribe(ctx, "ch", p.deliver); err != nil {
		t.Fatal(err)
	}
	if n, err := admin.Do(ctx, "CLIENT", "KILL", "TYPE", "pubsub").Int(); err != nil || n != 1 {
		t.Fatalf("CLIENT KILL TYPE pubsub: %d killed, %v", n, err)
	}
	// rueidis subscribes again on a new connection: "all" says that
	// messages may have been lost, and the subscription carries on.
	p.await(t, "all", 10*time.Second)
	if n, err := admin.Publish(ctx, "ch", "grant:2:y").Result(); err != nil || n != 1 {
		t.Fatalf("PUBLISH after the reconnection reached %d subscribers, %v", n, err)
	}
	p.await(t, "grant:2:y", 5*time.Second)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Subscribe(ctx, "other", p.deliver); !errors.Is(err, runtime.ErrClosed) {
		t.Fatalf("Subscribe after Close: %v, want ErrClosed", err)
	}
}

// A shard subscription on a Cluster follows its slot: the old owner's
// SUNSUBSCRIBE reaches deliver as PayloadUnsubscribed, and a new Subscribe
// lands on the new owner.
func TestShardSubscriptionFollowsItsSlot(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	b := rueidisbackend.New(newClient(t, cl.Addrs...))
	defer b.Close()
	ctx := ctxTimeout(t, 60*time.Second)
	if b.PublishCommand() != "SPUBLISH" {
		t.Fatalf("PublishCommand %q on a Cluster", b.PublishCommand())
	}
	admin := cl.Client(t)
	channel := "lockgen:wake:{moving}"
	slot, err := admin.ClusterKeySlot(ctx, channel).Result()
	if err != nil {
		t.Fatal(err)
	}
	p := make(payloads, 16)
	if _, err := b.Subscribe(ctx, channel, p.deliver); err != nil {
		t.Fatal(err)
	}
	from, err := cl.SlotOwner(ctx, int(slot))
	if err != nil {
		t.Fatal(err)
	}
	to := cl.Addrs[0]
	if to == from {
		to = cl.Addrs[1]
	}
	if err := cl.MoveSlot(ctx, int(slot), to); err != nil {
		t.Fatal(err)
	}
	p.await(t, backend.PayloadUnsubscribed, 20*time.Second)
	if _, err := b.Subscribe(ctx, channel, p.deliver); err != nil {
		t.Fatalf("subscribe after the slot moved: %v", err)
	}
	node := redis.NewClient(&redis.Options{Addr: to})
	defer node.Close()
	n, err := node.SPublish(ctx, channel, "all").Result()
	if err != nil || n != 1 {
		t.Fatalf("SPUBLISH on the new owner %s reached %d subscribers, %v", to, n, err)
	}
	p.await(t, "all", 5*time.Second)
}

// script returns a lua.Script for src, as package lua builds them.
func script(src string) *lua.Script {
	sum := sha1.Sum([]byte(src))
	return &lua.Script{Name: "test", Source: src, SHA1: hex.EncodeToString(sum[:])}
}

// EvalBatch answers every call in order, converting replies to what a
// go-redis client gets (nested tables, false as nil, error replies as
// errors), and sends a call the server has not cached as EVAL. EvalWait
// does the same, then WAIT: with no replica it reports 0 acknowledgements
// after WAIT's timeout rather than blocking, and a Locker that asks for a
// replica is told ErrNotReplicated.
func TestEvalBatchAndWait(t *testing.T) {
	srv := redistest.Start(t)
	c := newClient(t, srv.Addr)
	b := rueidisbackend.New(c)
	defer b.Close()
	ctx := ctxTimeout(t, 20*time.Second)
	table := script("return {KEYS[1], tonumber(ARGV[1]), false, {ARGV[2]}}")
	fails := script("return redis.error_reply('WRONG thing')")
	nothing := script("return false")
	calls := []backend.Call{
		{Script: table, Keys: []string{"k"}, Args: []string{"7", "x"}},
		{Script: fails, Keys: []string{"k"}},
		{Script: nothing, Keys: []string{"k"}},
	}
	for round := range 2 { // round 0 meets NOSCRIPT, round 1 the cached scripts
		replies := b.EvalBatch(ctx, calls)
		if len(replies) != 3 {
			t.Fatalf("round %d: %d replies to 3 calls", round, len(replies))
		}
		want := []any{"k", int64(7), nil, []any{"x"}}
		if !reflect.DeepEqual(replies[0].Value, want) || replies[0].Err != nil {
			t.Errorf("round %d: table reply %#v, %v; want %#v", round, replies[0].Value, replies[0].Err, want)
		}
		if replies[1].Err == nil || !strings.Contains(replies[1].Err.Error(), "WRONG thing") {
			t.Errorf("round %d: error reply %v", round, replies[1].Err)
		}
		if replies[2].Value != nil || replies[2].Err != nil {
			t.Errorf("round %d: false reply %#v, %v; want nil", round, replies[2].Value, replies[2].Err)
		}
	}
	if err := srv.Client(t).ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	v, acked, err := b.EvalWait(ctx, calls[0], 1, 200*time.Millisecond)
	if err != nil || acked != 0 || !reflect.DeepEqual(v, []any{"k", int64(7), nil, []any{"x"}}) {
		t.Fatalf("EvalWait: %#v, %d acked, %v", v, acked, err)
	}
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Errorf("EvalWait returned after %v, before WAIT's timeout of 200ms", d)
	}

	l := rueidisbackend.NewLocker(c, runtime.WithReplicas(1, 100*time.Millisecond))
	defer l.Close()
	_, err = l.Acquire(ctx, runtime.Lock{Kind: runtime.Mutex, Key: "w", Wait: runtime.NoWait})
	if !errors.Is(err, runtime.ErrNotReplicated) {
		t.Fatalf("acquire with WithReplicas(1) and no replica: %v, want ErrNotReplicated", err)
	}
}
