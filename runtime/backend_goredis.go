package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// NewGoRedisBackend returns the Backend New uses: rdb may be a single-node
// client, a Sentinel failover client (both *redis.Client) or a
// *redis.ClusterClient. On a Cluster wake channels are shard channels
// (SSUBSCRIBE/SPUBLISH), one Pub/Sub connection per master; elsewhere one
// Pub/Sub connection carries every channel. A *redis.Ring is not supported:
// its sharding is not visible to the scripts' hash tags.
func NewGoRedisBackend(rdb redis.UniversalClient) Backend {
	b := &goRedisBackend{rdb: rdb, nodes: map[string]*nodeSubscriber{}}
	b.cluster, _ = rdb.(*redis.ClusterClient)
	return b
}

type goRedisBackend struct {
	rdb     redis.UniversalClient
	cluster *redis.ClusterClient // nil unless rdb is a Cluster client

	mu     sync.Mutex
	nodes  map[string]*nodeSubscriber // by node address ("" off Cluster)
	closed bool
}

func (b *goRedisBackend) PublishCommand() string {
	if b.cluster != nil {
		return "SPUBLISH"
	}
	return "PUBLISH"
}

func isNoScript(err error) bool { return err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") }

func argv(c Call) []any {
	a := make([]any, len(c.Args))
	for i, s := range c.Args {
		a[i] = s
	}
	return a
}

// result turns go-redis's nil-reply error into a nil reply.
func result(v any, err error) (any, error) {
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	return v, err
}

func (b *goRedisBackend) Eval(ctx context.Context, c Call) (any, error) {
	v, err := b.rdb.EvalSha(ctx, c.Script.SHA1, c.Keys, argv(c)...).Result()
	if isNoScript(err) {
		v, err = b.rdb.Eval(ctx, c.Script.Source, c.Keys, argv(c)...).Result()
	}
	return result(v, err)
}

func (b *goRedisBackend) EvalBatch(ctx context.Context, calls []Call) []Reply {
	out := make([]Reply, len(calls))
	cmds := make([]*redis.Cmd, len(calls))
	// A ClusterClient splits a pipeline into one per node by itself. The
	// error of Exec is also on the commands, which are read one by one.
	_, _ = b.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, c := range calls {
			cmds[i] = p.EvalSha(ctx, c.Script.SHA1, c.Keys, argv(c)...)
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
		out[i] = Reply{Value: v, Err: err}
	}
	if len(retry) == 0 {
		return out
	}
	_, _ = b.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, i := range retry {
			c := calls[i]
			cmds[i] = p.Eval(ctx, c.Script.Source, c.Keys, argv(c)...)
		}
		return nil
	})
	for _, i := range retry {
		v, err := result(cmds[i].Result())
		out[i] = Reply{Value: v, Err: err}
	}
	return out
}

// nodeFor returns the client of the node that serves key: the master of its
// slot on a Cluster, the client itself elsewhere.
func (b *goRedisBackend) nodeFor(ctx context.Context, key string) (*redis.Client, string, error) {
	if b.cluster != nil {
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

func (b *goRedisBackend) EvalWait(ctx context.Context, c Call, replicas int, timeout time.Duration) (any, int, error) {
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
	v, n, err := run(func(p redis.Pipeliner) *redis.Cmd { return p.EvalSha(ctx, c.Script.SHA1, c.Keys, argv(c)...) })
	if isNoScript(err) {
		v, n, err = run(func(p redis.Pipeliner) *redis.Cmd { return p.Eval(ctx, c.Script.Source, c.Keys, argv(c)...) })
	}
	return v, n, err
}

func (b *goRedisBackend) Subscribe(ctx context.Context, channel string, deliver func(string)) (func(), error) {
	node, addr, err := b.nodeFor(ctx, channel)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, ErrClosed
	}
	ns := b.nodes[addr]
	if ns == nil {
		ns = newNodeSubscriber(node, b.cluster != nil)
		b.nodes[addr] = ns
	}
	b.mu.Unlock()
	return ns.subscribe(ctx, channel, deliver)
}

func (b *goRedisBackend) Close() error {
	b.mu.Lock()
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

// nodeSubscriber is the one Pub/Sub connection to one node. go-redis
// reconnects it and resubscribes its channels by itself; the confirmations
// of those resubscriptions are how this type learns that messages may have
// been lost, and it delivers "all" to those channels then.
//
// It reads the connection itself (PubSub.ReceiveTimeout) rather than
// through go-redis's ChannelWithSubscriptions: that helper hands every
// message from its reading goroutine to a buffered channel and pokes a
// health-check goroutine, two goroutine wake-ups per message on the path
// from a release to the next waiter's acquire. Here the goroutine that
// reads a message is the one that signals the waiter, and the health check
// is a PING sent when the connection has been quiet for pingInterval.
type nodeSubscriber struct {
	ps      *redis.PubSub
	sharded bool
	stop    chan struct{} // closed by close: the receive loop must end
	exited  chan struct{} // closed when the receive loop has ended

	mu      sync.Mutex
	deliver map[string]func(string)
	pending map[string]chan struct{} // subscriptions sent, not yet confirmed
}

// Health check and reconnection pacing of a node's Pub/Sub connection.
const (
	// pingInterval: a connection quiet for this long gets a PING, whose
	// failure makes go-redis reconnect (and resubscribe).
	pingInterval = 3 * time.Second
	// receiveBackoffMax bounds the pause between two failed reads while the
	// node is unreachable; the pause doubles from receiveBackoffMin.
	receiveBackoffMin = 10 * time.Millisecond
	receiveBackoffMax = time.Second
)

func newNodeSubscriber(node *redis.Client, sharded bool) *nodeSubscriber {
	ns := &nodeSubscriber{
		sharded: sharded,
		stop:    make(chan struct{}),
		exited:  make(chan struct{}),
		deliver: map[string]func(string){},
		pending: map[string]chan struct{}{},
	}
	ctx := context.Background()
	if sharded {
		ns.ps = node.SSubscribe(ctx)
	} else {
		ns.ps = node.Subscribe(ctx)
	}
	go ns.receive()
	return ns
}

// receive reads the connection until close. A failed read makes go-redis
// drop the connection and dial a new one that resubscribes every channel on
// the next read; while that keeps failing, reads are paced by a backoff so
// that an unreachable node does not spin a core.
func (ns *nodeSubscriber) receive() {
	defer close(ns.exited)
	ctx := context.Background()
	backoff := time.Duration(0)
	for {
		m, err := ns.ps.ReceiveTimeout(ctx, pingInterval)
		if err != nil {
			select {
			case <-ns.stop:
				return
			default:
			}
			var ne interface{ Timeout() bool }
			if errors.As(err, &ne) && ne.Timeout() {
				// Quiet for a while: check that the connection is alive. A
				// PING that cannot be written makes go-redis reconnect; its
				// PONG arrives as the next read.
				pctx, cancel := context.WithTimeout(ctx, pingInterval)
				_ = ns.ps.Ping(pctx)
				cancel()
				continue
			}
			backoff = min(max(2*backoff, receiveBackoffMin), receiveBackoffMax)
			select {
			case <-ns.stop:
				return
			case <-time.After(backoff):
			}
			continue
		}
		backoff = 0
		ns.handle(m)
	}
}

// handle acts on one thing read from the connection.
func (ns *nodeSubscriber) handle(m any) {
	switch m := m.(type) {
	case *redis.Message:
		ns.mu.Lock()
		fn := ns.deliver[m.Channel]
		ns.mu.Unlock()
		if fn != nil {
			fn(m.Payload)
		}
	case *redis.Subscription:
		if m.Kind != "subscribe" && m.Kind != "ssubscribe" {
			return
		}
		ns.mu.Lock()
		confirm, waiting := ns.pending[m.Channel]
		delete(ns.pending, m.Channel)
		fn := ns.deliver[m.Channel]
		ns.mu.Unlock()
		switch {
		case waiting:
			close(confirm)
		case fn != nil:
			fn("all") // resubscribed after a reconnection
		}
	}
}

func (ns *nodeSubscriber) subscribe(ctx context.Context, channel string, deliver func(string)) (func(), error) {
	confirm := make(chan struct{})
	ns.mu.Lock()
	ns.deliver[channel] = deliver
	ns.pending[channel] = confirm
	ns.mu.Unlock()
	var err error
	if ns.sharded {
		err = ns.ps.SSubscribe(ctx, channel)
	} else {
		err = ns.ps.Subscribe(ctx, channel)
	}
	if err == nil {
		select {
		case <-confirm:
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	unsubscribe := func() {
		ns.mu.Lock()
		delete(ns.deliver, channel)
		delete(ns.pending, channel)
		ns.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if ns.sharded {
			_ = ns.ps.SUnsubscribe(ctx, channel)
		} else {
			_ = ns.ps.Unsubscribe(ctx, channel)
		}
	}
	if err != nil {
		unsubscribe()
		return nil, fmt.Errorf("lockgen: subscribe %s: %w", channel, err)
	}
	return unsubscribe, nil
}

// close ends the connection and waits for the receive loop to end, so that
// no deliver runs after the Locker is closed.
func (ns *nodeSubscriber) close() error {
	close(ns.stop)
	err := ns.ps.Close()
	<-ns.exited
	return err
}
