package failover_test

import (
	"context"
	"errors"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockgen/lockgen/redistest"
	"github.com/lockgen/lockgen/runtime"
	"github.com/redis/go-redis/v9"
)

// Timings of the Cluster failover tests, generous for a busy machine.
const (
	// clLease is the lease of the held locks: long enough that a renewal
	// timer cannot stand in for noticing a failover.
	clLease = 8 * time.Second
	// clWakeSlack bounds how long after a release its waiter may get the
	// lock. Without a wake message a waiter would retry only after the
	// holder's lease (clLease), or its registration window (30 s).
	clWakeSlack = 3 * time.Second
	// clWaitFor bounds every wait of the tests on an event.
	clWaitFor = 20 * time.Second
)

// clKeysOn returns n lock keys whose slots the master at owner serves,
// named after base.
func clKeysOn(t *testing.T, rdb *redis.ClusterClient, owner, base string, n int) []string {
	t.Helper()
	ctx := context.Background()
	ranges, err := rdb.ClusterSlots(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for i := 0; len(keys) < n && i < 100*n+1000; i++ {
		key := base + strconv.Itoa(i)
		// The runtime puts the whole key in a hash tag: its slot is the
		// key's own.
		s, err := rdb.ClusterKeySlot(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range ranges {
			if int64(r.Start) <= s && s <= int64(r.End) && len(r.Nodes) > 0 && r.Nodes[0].Addr == owner {
				keys = append(keys, key)
			}
		}
	}
	if len(keys) < n {
		t.Fatalf("found %d keys on %s, want %d", len(keys), owner, n)
	}
	return keys
}

// clSlot returns the Cluster slot of a lock key.
func clSlot(t *testing.T, rdb *redis.ClusterClient, key string) int {
	t.Helper()
	s, err := rdb.ClusterKeySlot(context.Background(), key).Result()
	if err != nil {
		t.Fatal(err)
	}
	return int(s)
}

// clEvents records, per lock key, when the Locker it observes saw events
// of each kind, and signals busy replies.
type clEvents struct {
	mu   sync.Mutex
	seen map[string]map[runtime.EventKind][]time.Time
	busy chan string
}

func newClEvents() *clEvents {
	return &clEvents{seen: map[string]map[runtime.EventKind][]time.Time{}, busy: make(chan string, 1024)}
}

func (e *clEvents) observe(ev runtime.Event) {
	now := time.Now()
	e.mu.Lock()
	m := e.seen[ev.Lock.Key]
	if m == nil {
		m = map[runtime.EventKind][]time.Time{}
		e.seen[ev.Lock.Key] = m
	}
	m[ev.Kind] = append(m[ev.Kind], now)
	e.mu.Unlock()
	if ev.Kind == runtime.EventBusy {
		select {
		case e.busy <- ev.Lock.Key:
		default:
		}
	}
}

// since reports whether key saw an event of kind at or after t.
func (e *clEvents) since(key string, kind runtime.EventKind, t time.Time) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, at := range e.seen[key][kind] {
		if !at.Before(t) {
			return true
		}
	}
	return false
}

// waitBusy waits until every key has had n busy replies: a waiter's second
// one comes after it subscribed to its wake channel.
func (e *clEvents) waitBusy(t *testing.T, keys []string, n int) {
	t.Helper()
	want := map[string]int{}
	for _, k := range keys {
		want[k] = n
	}
	deadline := time.After(clWaitFor)
	for len(want) > 0 {
		select {
		case k := <-e.busy:
			if want[k]--; want[k] <= 0 {
				delete(want, k)
			}
		case <-deadline:
			t.Fatalf("no %d busy replies within %v for %v", n, clWaitFor, want)
		}
	}
}

// waitRenewedSince waits until every key has been renewed at or after t.
func (e *clEvents) waitRenewedSince(t *testing.T, keys []string, since time.Time) {
	t.Helper()
	deadline := time.Now().Add(clWaitFor)
	for _, k := range keys {
		for !e.since(k, runtime.EventRenewed, since) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: no renewal acknowledged within %v of the failover", k, clWaitFor)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// clPercentile returns the p-th percentile (0..100) of ds.
func clPercentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)-1, len(s)*p/100)]
}

// clReplicate waits until the master at addr has its writes on a replica,
// so that a kill of it loses no lock the test means to survive.
func clReplicate(t *testing.T, addr string) {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	n, err := c.Do(context.Background(), "WAIT", 1, 5000).Int()
	if err != nil || n < 1 {
		t.Fatalf("WAIT on %s: %d replicas, %v", addr, n, err)
	}
}

// clNewLocker returns a Locker over a fresh default cluster client (the
// go-redis options a user would start with), closed when the test ends.
func clNewLocker(t *testing.T, cl *redistest.Cluster, prefix string, opts ...runtime.Option) *runtime.Locker {
	t.Helper()
	rdb := cl.Client(t)
	l := runtime.New(rdb, append([]runtime.Option{runtime.WithKeyPrefix(prefix), runtime.WithDefaultLease(clLease)}, opts...)...)
	t.Cleanup(func() { l.Close() })
	return l
}

// clLost reports whether err is the cancellation cause of a lost lock.
func clLost(err error) bool { return errors.Is(err, runtime.ErrLockLost) }

// clWaitShardChannels waits until the nodes at addrs (a shard's master
// and replica: both deliver its shard messages) have n shard channels of
// keys under prefix subscribed between them (PUBSUB SHARDCHANNELS). A
// node that does not answer counts none.
func clWaitShardChannels(t *testing.T, addrs []string, prefix string, n int) {
	t.Helper()
	deadline := time.Now().Add(clWaitFor)
	seen := map[string][]string{}
	for time.Now().Before(deadline) {
		total := 0
		for _, addr := range addrs {
			c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
			channels, err := c.PubSubShardChannels(context.Background(), prefix+"*").Result()
			c.Close()
			if err == nil {
				seen[addr] = channels
				total += len(channels)
			}
		}
		if total >= n {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("wake channels subscribed: %v, want %d: the waiters are not subscribed in the slot's shard", seen, n)
}

// clShardNodes returns the nodes of the shard that newMaster and owner
// belong to: both, and every other node that replicates either.
func clShardNodes(cl *redistest.Cluster, newMaster, owner string) []string {
	nodes := []string{newMaster}
	if owner != newMaster {
		nodes = append(nodes, owner)
	}
	for _, addr := range cl.Addrs {
		if addr == newMaster || addr == owner {
			continue
		}
		c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
		info, err := c.Info(context.Background(), "replication").Result()
		c.Close()
		if err == nil && (strings.Contains(info, "master_port:"+portOf(newMaster)) || strings.Contains(info, "master_port:"+portOf(owner))) {
			nodes = append(nodes, addr)
		}
	}
	return nodes
}

func portOf(addr string) string {
	_, port, _ := strings.Cut(addr, ":")
	return port
}

// clShardChannels returns how many shard channels under prefix the node
// at addr has subscribed, -1 if it does not answer.
func clShardChannels(addr, prefix string) int {
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer c.Close()
	channels, err := c.PubSubShardChannels(context.Background(), prefix+"*").Result()
	if err != nil {
		return -1
	}
	return len(channels)
}
