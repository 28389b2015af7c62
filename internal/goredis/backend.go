package goredis

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/internal/callqueue"
	"github.com/redis/go-redis/v9"
)

// New returns the Backend runtime.New uses: rdb may be a single-node
// client, a Sentinel failover client (both *redis.Client) or a
// *redis.ClusterClient. On a Cluster wake channels are shard channels
// (SSUBSCRIBE/SPUBLISH), one Pub/Sub connection per master; elsewhere one
// Pub/Sub connection carries every channel. A *redis.Ring is not supported:
// its sharding is not visible to the scripts' hash tags.
//
// On a *redis.Client it adds a hook that reads the server's run_id after
// each new connection, to notice a failover or a restart at once; the hook
// stays on the client after Close, and does nothing then: make one backend
// per client, not one per use.
//
// It also makes the connections the client dials from then on close with a
// reset (SO_LINGER 0), so that nothing a call abandoned had sent can reach
// Redis after the call returned (resetclose.go); on a Cluster client, the
// connections of node clients made from then on.
func New(rdb redis.UniversalClient) backend.Backend {
	b := &goRedisBackend{rdb: rdb, nodes: map[string]*nodeSubscriber{}, slots: newSlotOwners(), stop: make(chan struct{})}
	addResetOnClose(rdb)
	b.cluster, _ = rdb.(*redis.ClusterClient)
	if b.cluster != nil {
		// Each master's restarts, as below for the one server (nodewatch.go).
		b.cluster.OnNewNode(b.watchNodeRestarts)
	}
	if c, ok := rdb.(*redis.Client); ok {
		// The hook stays on the client after Close, and does nothing then.
		b.server = &serverWatch{b: b, rdb: c, stop: b.stop, changed: b.serverChanged}
		c.AddHook(b.server)
		// Concurrent calls share round trips (internal/callqueue). A client that
		// ends each call at its context's deadline (ContextTimeoutEnabled)
		// ends a pipeline at its context's too, so there, as over rueidis,
		// a batch runs until the earliest deadline of its calls, and a call
		// its caller may cancel either waits in the queue listening to its
		// context (EvalWithin) or runs alone (Coalescer.Route).
		b.co = callqueue.New(b.evalDirect, b.evalBatchOnce)
		b.co.Deadlines = c.Options().ContextTimeoutEnabled
	}
	return b
}

type goRedisBackend struct {
	rdb     redis.UniversalClient
	cluster *redis.ClusterClient // nil unless rdb is a Cluster client
	// slotsStale: a node said that a slot moved away from it; nodeFor
	// reloads the slot map before it picks a node.
	slotsStale atomic.Bool
	slots      *slotOwners          // the slot map last seen, and who to tell of changes (slotfollow.go)
	server     *serverWatch         // nil on a Cluster (serverwatch.go)
	restarts   nodeRestarts         // on a Cluster: a serverWatch per node (nodewatch.go)
	stop       chan struct{}        // closed by Close: a server check pausing between tries ends
	co         *callqueue.Coalescer // nil on a Cluster

	mu     sync.Mutex
	nodes  map[string]*nodeSubscriber // by node address ("" off Cluster)
	closed bool
}

// Caps: the client's own bound on a call (callLimit); the backend sends the
// values the runtime boxed (runtime/argv.go), watches its masters and pings every
// connection.
func (b *goRedisBackend) Caps() backend.Caps {
	bound, honors := b.callLimit()
	return backend.Caps{CallBound: bound, HonorsDeadline: honors, BoxedArgs: true, WatchMasters: b.watchMasters, Ping: b.ping}
}

// QueueOf returns the queue of calls of b and true if b is this package's
// backend (the queue is nil on a Cluster), for the runtime's Locker over
// it: a call may wait in it for a shared pipeline until its caller gives
// up (callqueue's EvalWithin). ok tells the Locker that b coalesces its
// calls itself, where it can, and needs no coalescer in front of it even
// when it states Caps.HonorsDeadline. The Locker asks only about the
// backend it was given, and not once an option wraps it
// (WithRestartGuard), so that no call reaches the queue past a wrapper
// that must see it.
func QueueOf(b backend.Backend) (co *callqueue.Coalescer, ok bool) {
	if g, ok := b.(*goRedisBackend); ok {
		return g.co, true
	}
	return nil, false
}

// callLimit says how long one call can take at most with the client's own
// timeouts and retries (every try may wait for a pooled connection, dial,
// write and read; 0 when a timeout is off), and whether the client applies
// the context's deadline to the connection (ContextTimeoutEnabled).
func (b *goRedisBackend) callLimit() (time.Duration, bool) {
	var pool, dial, write, read, backoff time.Duration
	var retries int
	var honors bool
	switch c := b.rdb.(type) {
	case *redis.Client:
		o := c.Options()
		pool, dial, write, read, backoff, retries, honors = o.PoolTimeout, o.DialTimeout, o.WriteTimeout, o.ReadTimeout, o.MaxRetryBackoff, o.MaxRetries, o.ContextTimeoutEnabled
	case *redis.ClusterClient:
		o := c.Options()
		pool, dial, write, read, backoff, retries, honors = o.PoolTimeout, o.DialTimeout, o.WriteTimeout, o.ReadTimeout, o.MaxRetryBackoff, max(o.MaxRetries, o.MaxRedirects), o.ContextTimeoutEnabled
	default:
		return 0, false
	}
	if pool <= 0 || dial <= 0 || write <= 0 || read <= 0 {
		return 0, honors
	}
	tries := time.Duration(max(retries, 0) + 1)
	bound := tries*(pool+dial+write+read) + (tries-1)*max(backoff, 0)
	if b.cluster != nil {
		// A call follows its slot for up to followLimit more, and its
		// last attempt may take the client's whole bound again.
		bound = 2*bound + followLimit
	}
	return bound, honors
}

func (b *goRedisBackend) PublishCommand() string {
	if b.cluster != nil {
		return "SPUBLISH"
	}
	return "PUBLISH"
}

func isNoScript(err error) bool { return err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") }

// result turns go-redis's nil-reply error into a nil reply.
func result(v any, err error) (any, error) {
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	return v, err
}

// Eval runs c, sharing a round trip with concurrent calls where it can; on
// a Cluster it follows c's slot (slotfollow.go).
func (b *goRedisBackend) Eval(ctx context.Context, c backend.Call) (any, error) {
	if b.co != nil {
		return b.co.Route(ctx, c)
	}
	return b.evalDirect(ctx, c)
}

// evalDirect runs c on its own round trip.
func (b *goRedisBackend) evalDirect(ctx context.Context, c backend.Call) (any, error) {
	var v any
	err := b.follow(ctx, func(ctx context.Context) error {
		var err error
		v, err = evalSha(ctx, b.rdb, c).Result()
		if isNoScript(err) {
			v, err = evalSource(ctx, b.rdb, c).Result()
		}
		v, err = result(v, err)
		return err
	})
	return v, err
}

// EvalBatch runs calls; on a Cluster, those whose node did not serve their
// slot are sent again, together, after a reload of the slot map, until
// they get an answer or ctx ends (slotfollow.go).
func (b *goRedisBackend) EvalBatch(ctx context.Context, calls []backend.Call) []backend.Reply {
	out := b.evalBatchOnce(ctx, calls)
	if b.cluster == nil {
		return out
	}
	giveUp := time.Now().Add(followLimit)
	pause := slotRetryPauseMin
	for n := 0; ; n++ {
		var again []int
		for i, r := range out {
			if lostRoute(r.Err) {
				again = append(again, i)
			}
		}
		if len(again) == 0 || !b.followPause(ctx, giveUp, out[again[0]].Err, n, &pause) {
			return out
		}
		sub := make([]backend.Call, len(again))
		for j, i := range again {
			sub[j] = calls[i]
		}
		for j, r := range b.evalBatchOnce(ctx, sub) {
			out[again[j]] = r
		}
	}
}

func (b *goRedisBackend) evalBatchOnce(ctx context.Context, calls []backend.Call) []backend.Reply {
	out := make([]backend.Reply, len(calls))
	cmds := make([]*redis.Cmd, len(calls))
	// A ClusterClient splits a pipeline into one per node by itself. The
	// error of Exec is also on the commands, which are read one by one.
	_, _ = b.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, c := range calls {
			cmds[i] = evalSha(ctx, p, c)
		}
		return nil
	})
	var retry []int
	for i, cmd := range cmds {
		v, err := result(cmd.Result())
		if isNoScript(err) {
			retry = append(retry, i)
			continue
		}
		out[i] = backend.Reply{Value: v, Err: err}
	}
	if len(retry) == 0 {
		return out
	}
	_, _ = b.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, i := range retry {
			c := calls[i]
			cmds[i] = evalSource(ctx, p, c)
		}
		return nil
	})
	for _, i := range retry {
		v, err := result(cmds[i].Result())
		out[i] = backend.Reply{Value: v, Err: err}
	}
	return out
}

// nodeFor returns the client of the node that serves key: the master of its
// slot on a Cluster, the client itself elsewhere. After a node said that a
// slot moved, it reloads the slot map first, so that it does not return the
// node the slot left.
func (b *goRedisBackend) nodeFor(ctx context.Context, key string) (*redis.Client, string, error) {
	if b.cluster != nil {
		if b.slotsStale.Swap(false) {
			if err := b.reloadSlots(ctx); err != nil {
				b.slotsStale.Store(true)
				return nil, "", fmt.Errorf("reload the cluster's slots: %w", err)
			}
		}
		c, err := b.cluster.MasterForKey(ctx, key)
		if err != nil {
			return nil, "", err
		}
		return c, c.Options().Addr, nil
	}
	if c, ok := b.rdb.(*redis.Client); ok {
		return c, "", nil
	}
	return nil, "", fmt.Errorf("lockgen: %T is not supported; use a *redis.Client or *redis.ClusterClient", b.rdb)
}

// EvalWait runs c and WAIT on the node that serves c's keys, found by
// nodeFor. A node that no longer serves them answers MOVED without running
// c, one that died does not answer: c follows its slot (slotfollow.go).
func (b *goRedisBackend) EvalWait(ctx context.Context, c backend.Call, replicas int, timeout time.Duration) (any, int, error) {
	var v any
	var n int
	err := b.follow(ctx, func(ctx context.Context) error {
		var err error
		v, n, err = b.evalWaitOnce(ctx, c, replicas, timeout)
		return err
	})
	return v, n, err
}

func (b *goRedisBackend) evalWaitOnce(ctx context.Context, c backend.Call, replicas int, timeout time.Duration) (any, int, error) {
	node, _, err := b.nodeFor(ctx, c.Keys[0])
	if err != nil {
		return nil, 0, err
	}
	ms := max(timeout.Milliseconds(), 1) // WAIT 0 would block forever
	run := func(eval func(p redis.Pipeliner) *redis.Cmd) (any, int, error) {
		var ev *redis.Cmd
		var wait *redis.Cmd
		// A pipeline runs on one connection, which is what WAIT needs.
		_, _ = node.Pipelined(ctx, func(p redis.Pipeliner) error {
			ev = eval(p)
			wait = p.Do(ctx, "WAIT", replicas, ms)
			return nil
		})
		v, err := result(ev.Result())
		if err != nil {
			return nil, 0, err
		}
		n, err := wait.Int()
		return v, n, err
	}
	v, n, err := run(func(p redis.Pipeliner) *redis.Cmd { return evalSha(ctx, p, c) })
	if isNoScript(err) {
		v, n, err = run(func(p redis.Pipeliner) *redis.Cmd { return evalSource(ctx, p, c) })
	}
	return v, n, err
}

// closing reports whether Close has been called.
func (b *goRedisBackend) closing() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.closed
}

func (b *goRedisBackend) Close() error {
	b.mu.Lock()
	if !b.closed {
		close(b.stop)
	}
	b.closed = true
	nodes := b.nodes
	b.nodes = map[string]*nodeSubscriber{}
	b.mu.Unlock()
	var errs []error
	for _, ns := range nodes {
		errs = append(errs, ns.close())
	}
	return errors.Join(errs...)
}
