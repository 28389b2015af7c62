package runtime

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// NewGoRedisBackend returns the Backend New uses: rdb may be a single-node
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
func NewGoRedisBackend(rdb redis.UniversalClient) Backend {
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
		// Concurrent calls share round trips (coalesce.go). A client that
		// ends each call at its context's deadline (ContextTimeoutEnabled)
		// ends a pipeline at its context's too, so there, as over rueidis,
		// a batch runs until the earliest deadline of its calls, and a call
		// its caller may cancel either waits in the queue listening to its
		// context (evalWithin) or runs alone (coalescer.route).
		b.co = newCoalescer(b.evalDirect, b.evalBatchOnce)
		b.co.deadlines = c.Options().ContextTimeoutEnabled
	}
	return b
}

type goRedisBackend struct {
	rdb     redis.UniversalClient
	cluster *redis.ClusterClient // nil unless rdb is a Cluster client
	// slotsStale: a node said that a slot moved away from it; nodeFor
	// reloads the slot map before it picks a node.
	slotsStale atomic.Bool
	slots      *slotOwners   // the slot map last seen, and who to tell of changes (slotfollow.go)
	server     *serverWatch  // nil on a Cluster (serverwatch.go)
	restarts   nodeRestarts  // on a Cluster: a serverWatch per node (nodewatch.go)
	stop       chan struct{} // closed by Close: a server check pausing between tries ends
	co         *coalescer    // nil on a Cluster

	mu     sync.Mutex
	nodes  map[string]*nodeSubscriber // by node address ("" off Cluster)
	closed bool
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
func (b *goRedisBackend) Eval(ctx context.Context, c Call) (any, error) {
	if b.co != nil {
		return b.co.route(ctx, c)
	}
	return b.evalDirect(ctx, c)
}

// evalWithin lets a call whose caller may stop waiting for it wait in the
// coalescer's queue (coalesce_within.go); on a Cluster, which has no
// coalescer, the Locker's other paths serve (queued false).
func (b *goRedisBackend) evalWithin(ctx context.Context, c Call, deadline time.Time) (any, *pending, error, bool) {
	if b.co == nil {
		return nil, nil, nil, false
	}
	return b.co.evalWithin(ctx, c, deadline)
}

// evalDirect runs c on its own round trip.
func (b *goRedisBackend) evalDirect(ctx context.Context, c Call) (any, error) {
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
func (b *goRedisBackend) EvalBatch(ctx context.Context, calls []Call) []Reply {
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
		sub := make([]Call, len(again))
		for j, i := range again {
			sub[j] = calls[i]
		}
		for j, r := range b.evalBatchOnce(ctx, sub) {
			out[again[j]] = r
		}
	}
}

func (b *goRedisBackend) evalBatchOnce(ctx context.Context, calls []Call) []Reply {
	out := make([]Reply, len(calls))
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
		out[i] = Reply{Value: v, Err: err}
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
		out[i] = Reply{Value: v, Err: err}
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
func (b *goRedisBackend) EvalWait(ctx context.Context, c Call, replicas int, timeout time.Duration) (any, int, error) {
	var v any
	var n int
	err := b.follow(ctx, func(ctx context.Context) error {
		var err error
		v, n, err = b.evalWaitOnce(ctx, c, replicas, timeout)
		return err
	})
	return v, n, err
}

func (b *goRedisBackend) evalWaitOnce(ctx context.Context, c Call, replicas int, timeout time.Duration) (any, int, error) {
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

// Subscription pacing on a Cluster whose slots move.
const (
	// subscribeTimeout bounds a Subscribe whose context allows longer: a
	// waiter whose node does not answer does without wake messages (its
	// wait is bounded by the lease anyway) rather than hang.
	subscribeTimeout = 5 * time.Second
	// slotRetryPauseMax bounds the pause between two attempts at a channel
	// whose slot is on the move; the pause doubles from slotRetryPauseMin.
	slotRetryPauseMin = 10 * time.Millisecond
	slotRetryPauseMax = 200 * time.Millisecond
)

// errSubscriptionEnded says that the server refused or ended a subscription
// because the node does not serve the channel's slot (MOVED, ASK, or a
// resubscription it could not take): the channel must be subscribed again
// on the slot's current owner.
var errSubscriptionEnded = errors.New("the server ended the subscription")

// Subscribe subscribes channel on the node that serves it. If that node
// says the channel's slot has moved, it reloads the slot map and tries the
// current owner, until ctx (or subscribeTimeout) ends.
func (b *goRedisBackend) Subscribe(ctx context.Context, channel string, deliver func(string)) (func(), error) {
	ctx, cancel := context.WithTimeout(ctx, subscribeTimeout)
	defer cancel()
	pause := slotRetryPauseMin
	for attempt := 0; ; attempt++ {
		unsubscribe, err := b.subscribeOnce(ctx, channel, deliver)
		ended := errors.Is(err, errSubscriptionEnded)
		if !ended && (b.cluster == nil || !lostRoute(err)) {
			return unsubscribe, err
		}
		if !ended {
			// The node is unreachable: its replica may have taken over.
			_ = b.reloadSlots(ctx)
		}
		if attempt == 0 && ended {
			continue // the slot map is reloaded first thing: no pause
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w; gave up after %d attempts: %w", err, attempt+1, ctx.Err())
		case <-time.After(pause):
		}
		pause = min(2*pause, slotRetryPauseMax)
	}
}

func (b *goRedisBackend) subscribeOnce(ctx context.Context, channel string, deliver func(string)) (func(), error) {
	node, addr, err := b.nodeFor(ctx, channel)
	if err != nil {
		return nil, fmt.Errorf("lockgen: subscribe %s: %w", channel, err)
	}
	ns := b.subscriber(node, addr)
	if ns == nil {
		return nil, ErrClosed
	}
	return ns.subscribe(ctx, channel, deliver)
}

// subscriber returns the node subscriber of the node at addr, made if
// need be; nil after Close.
func (b *goRedisBackend) subscriber(node *redis.Client, addr string) *nodeSubscriber {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	ns := b.nodes[addr]
	if ns == nil {
		// No I/O here: the subscriber dials from its own goroutine.
		ns = newNodeSubscriber(node, b.cluster != nil, b.slotMoved, func() { b.watchTopology(addr) })
		b.nodes[addr] = ns
	}
	return ns
}

// slotMoved is called by a node subscriber when the server said a slot of
// its node moved away: the next nodeFor reloads the slot map first, and
// the map is reloaded in the background meanwhile, so that the watchers
// hear of the move even if no call is made.
func (b *goRedisBackend) slotMoved() {
	if b.cluster == nil {
		return
	}
	b.slotsStale.Store(true)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), followLimit)
		defer cancel()
		_ = b.reloadSlots(ctx)
	}()
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

// clusterSlot is the Cluster hash slot of key: CRC16 (XMODEM) of its hash
// tag, or of the whole key if it has none, modulo 16384. It matches a MOVED
// or ASK reply to the channels it is about.
func clusterSlot(key string) int {
	if open := strings.IndexByte(key, '{'); open >= 0 {
		if n := strings.IndexByte(key[open+1:], '}'); n > 0 {
			key = key[open+1 : open+1+n]
		}
	}
	var crc uint16
	for i := 0; i < len(key); i++ {
		crc ^= uint16(key[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return int(crc) % 16384
}

// nodeSubscriber is the one Pub/Sub connection to one node. go-redis
// reconnects it and resubscribes its channels by itself; the confirmations
// of those resubscriptions are how this type learns that messages may have
// been lost, and it delivers "all" to those channels then.
//
// The server may also end a subscription on its own: a Cluster node drops
// the shard channels of a slot it gives away (SUNSUBSCRIBE nobody asked
// for), answers MOVED or ASK to a subscription of a slot it does not serve,
// and CROSSSLOT to go-redis's resubscription of channels of several slots
// in one command after a reconnection. Such channels are forgotten, here
// and in go-redis (so that no reconnection subscribes them again), their
// deliver gets PayloadUnsubscribed, and the backend reloads its slot map.
//
// It reads the connection itself (PubSub.ReceiveTimeout) rather than
// through go-redis's ChannelWithSubscriptions: that helper hands every
// message from its reading goroutine to a buffered channel and pokes a
// health-check goroutine, two goroutine wake-ups per message on the path
// from a release to the next waiter's acquire. Here the goroutine that
// reads a message is the one that signals the waiter, and the health check
// is a PING sent when the connection has been quiet for pingInterval.
type nodeSubscriber struct {
	ps        *redis.PubSub
	sharded   bool
	slotMoved func()        // tells the backend its slot map is out of date
	lostNode  func()        // tells the backend the node could not be read
	stop      chan struct{} // closed by close: the receive loop must end
	exited    chan struct{} // closed when the receive loop has ended

	mu   sync.Mutex
	subs map[string]*subscription
	// unsubscribing counts, per channel, the unsubscribes sent whose
	// confirmation has not come back. A confirmation beyond them is the
	// server ending the subscription on its own. When in doubt (a
	// connection lost with confirmations owed) the counts are dropped: a
	// subscription wrongly taken as ended costs a resubscription, one
	// wrongly taken as alive would cost its waiters their wake messages.
	unsubscribing map[string]int
	// pings are the health checks waiting for their PONG, by payload
	// (ping.go).
	pings map[string]chan struct{}
}

// subscription is one channel subscribed on a node.
type subscription struct {
	deliver func(string)
	// confirm is closed when the server confirms the subscription or
	// refuses it (then refused says why); it is nil once confirmed.
	confirm chan struct{}
	refused error
}

// Health check and reconnection pacing of a node's Pub/Sub connection.
const (
	// pingInterval: a connection quiet for this long gets a PING, whose
	// failure makes go-redis reconnect (and resubscribe).
	pingInterval = 3 * time.Second
	// receiveBackoffMax bounds the pause between two failed reads while the
	// node is unreachable; the pause doubles from receiveBackoffMin. It is
	// short because on a single server or Sentinel the Pub/Sub connection
	// is often the first to reach a new master, and its dial is what tells
	// the runtime (run_id) to re-verify the held locks: a second here was
	// up to a second of two holders after a failover that lost a lock.
	receiveBackoffMin = 10 * time.Millisecond
	receiveBackoffMax = 200 * time.Millisecond
	// unsubscribeTimeout bounds an unsubscribe, which is never waited for
	// by a caller that needs the answer.
	unsubscribeTimeout = 5 * time.Second
	// lostUnsubscribeTimeout bounds the unsubscribes of the channels of a
	// connection just lost: they mostly serve to make go-redis forget the
	// channels, and a dead node would otherwise hold the receive loop for
	// a dial (and its retries) per channel.
	lostUnsubscribeTimeout = 50 * time.Millisecond
)

func newNodeSubscriber(node *redis.Client, sharded bool, slotMoved, lostNode func()) *nodeSubscriber {
	ns := &nodeSubscriber{
		sharded:       sharded,
		slotMoved:     slotMoved,
		lostNode:      lostNode,
		stop:          make(chan struct{}),
		exited:        make(chan struct{}),
		subs:          map[string]*subscription{},
		unsubscribing: map[string]int{},
		pings:         map[string]chan struct{}{},
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
// that an unreachable node does not spin a core. An error reply of the
// server leaves the connection as it is.
func (ns *nodeSubscriber) receive() {
	defer close(ns.exited)
	ctx := context.Background()
	backoff := time.Duration(0)
	for {
		m, err := ns.ps.ReceiveTimeout(ctx, pingInterval)
		if err == nil {
			backoff = 0
			ns.handle(m)
			continue
		}
		select {
		case <-ns.stop:
			return
		default:
		}
		var ne interface{ Timeout() bool }
		var re redis.Error
		switch {
		case errors.As(err, &ne) && ne.Timeout():
			// Quiet for a while: check that the connection is alive. A
			// PING that cannot be written makes go-redis reconnect; its
			// PONG arrives as the next read.
			pctx, cancel := context.WithTimeout(ctx, pingInterval)
			_ = ns.ps.Ping(pctx)
			cancel()
		case errors.As(err, &re):
			ns.refused(re)
		default:
			ns.connectionLost()
			backoff = min(max(2*backoff, receiveBackoffMin), receiveBackoffMax)
			select {
			case <-ns.stop:
				return
			case <-time.After(backoff):
			}
		}
	}
}

// handle acts on one thing read from the connection.
func (ns *nodeSubscriber) handle(m any) {
	switch m := m.(type) {
	case *redis.Message:
		ns.mu.Lock()
		sub := ns.subs[m.Channel]
		ns.mu.Unlock()
		if sub != nil {
			sub.deliver(m.Payload)
		}
	case *redis.Subscription:
		switch m.Kind {
		case "subscribe", "ssubscribe":
			ns.confirmed(m.Channel)
		case "unsubscribe", "sunsubscribe":
			ns.unsubscribed(m.Channel)
		}
	case *redis.Pong:
		ns.ponged(m.Payload)
	}
}

// confirmed handles a subscription's confirmation: the answer to a
// subscribe, or a resubscription after a reconnection.
func (ns *nodeSubscriber) confirmed(channel string) {
	ns.mu.Lock()
	sub := ns.subs[channel]
	var confirm chan struct{}
	if sub != nil {
		confirm, sub.confirm = sub.confirm, nil
	}
	ns.mu.Unlock()
	switch {
	case confirm != nil:
		close(confirm)
	case sub != nil:
		sub.deliver("all") // resubscribed after a reconnection
	}
}

// unsubscribed handles an unsubscribe confirmation: the answer to one sent,
// or the server ending the subscription on its own.
func (ns *nodeSubscriber) unsubscribed(channel string) {
	ns.mu.Lock()
	n := ns.unsubscribing[channel]
	if n > 1 {
		ns.unsubscribing[channel] = n - 1
	} else {
		delete(ns.unsubscribing, channel)
	}
	ns.mu.Unlock()
	if n == 0 {
		ns.forget([]string{channel}, unsubscribeTimeout)
	}
}

// refused handles an error reply. MOVED and ASK say that the node does not
// serve a slot: every channel of that slot is ended here, and any
// unsubscribe of them sent meanwhile got that answer, not a confirmation.
// CROSSSLOT is the node refusing go-redis's resubscription of every channel
// in one command: all of them are ended. Other errors concern no channel
// that can be told.
func (ns *nodeSubscriber) refused(err redis.Error) {
	kind, rest, _ := strings.Cut(err.Error(), " ")
	var ended []string
	ns.mu.Lock()
	switch kind {
	case "MOVED", "ASK":
		field, _, _ := strings.Cut(rest, " ")
		slot, perr := strconv.Atoi(field)
		if perr != nil {
			break
		}
		for ch := range ns.unsubscribing {
			if clusterSlot(ch) == slot {
				delete(ns.unsubscribing, ch)
			}
		}
		for ch := range ns.subs {
			if clusterSlot(ch) == slot {
				ended = append(ended, ch)
			}
		}
	case "CROSSSLOT":
		for ch := range ns.subs {
			ended = append(ended, ch)
		}
	case "NOPERM":
		ns.refusePending(err) // noperm.go
	}
	ns.mu.Unlock()
	ns.forget(ended, unsubscribeTimeout)
}

// connectionLost drops what the lost connection still owed: the
// confirmations of unsubscribes sent on it will not come. On a Cluster the
// node may be gone for good, its slots taken over by a replica: its
// channels are ended, so that their waiters subscribe again where the
// slot map then says, and the backend watches the map for the takeover.
func (ns *nodeSubscriber) connectionLost() {
	ns.mu.Lock()
	clear(ns.unsubscribing)
	var channels []string
	if ns.sharded {
		for ch := range ns.subs {
			channels = append(channels, ch)
		}
	}
	ns.mu.Unlock()
	if ns.sharded {
		ns.lostNode()
		ns.forget(channels, lostUnsubscribeTimeout)
	}
}

// forget ends the subscriptions of channels that the server no longer has:
// a subscription still waiting for its confirmation is refused, one
// confirmed gets PayloadUnsubscribed. Each is also unsubscribed in go-redis,
// one command per channel since a Cluster node refuses channels of several
// slots in one, so that a reconnection does not subscribe it again.
func (ns *nodeSubscriber) forget(channels []string, timeout time.Duration) {
	var ended []*subscription
	var names []string
	ns.mu.Lock()
	for _, ch := range channels {
		sub := ns.subs[ch]
		if sub == nil {
			continue
		}
		delete(ns.subs, ch)
		ns.unsubscribing[ch]++
		names = append(names, ch)
		if sub.confirm != nil {
			sub.refused = errSubscriptionEnded
			close(sub.confirm)
			sub.confirm = nil
			continue
		}
		ended = append(ended, sub)
	}
	ns.mu.Unlock()
	if len(names) == 0 {
		return
	}
	ns.slotMoved()
	for _, ch := range names {
		ns.unsubscribe(ch, timeout)
	}
	for _, sub := range ended {
		sub.deliver(PayloadUnsubscribed)
	}
}

// unsubscribe sends the unsubscribe of channel, counted in unsubscribing
// by the caller.
func (ns *nodeSubscriber) unsubscribe(channel string, timeout time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var err error
	if ns.sharded {
		err = ns.ps.SUnsubscribe(ctx, channel)
	} else {
		err = ns.ps.Unsubscribe(ctx, channel)
	}
	if err != nil {
		// Not sent: no confirmation will come. go-redis has forgotten the
		// channel all the same, and a connection that could not take the
		// command is dropped with its subscriptions.
		ns.mu.Lock()
		if n := ns.unsubscribing[channel]; n > 1 {
			ns.unsubscribing[channel] = n - 1
		} else {
			delete(ns.unsubscribing, channel)
		}
		ns.mu.Unlock()
	}
}

// idle reports whether the subscriber carries no channel.
func (ns *nodeSubscriber) idle() bool {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	return len(ns.subs) == 0
}

// abandon closes the connection and ends every subscription, as the
// server would have: a subscription waiting for its confirmation is
// refused, a confirmed one gets PayloadUnsubscribed. The subscriber is
// not used again.
func (ns *nodeSubscriber) abandon() {
	_ = ns.close()
	ns.mu.Lock()
	subs := ns.subs
	ns.subs = map[string]*subscription{}
	var ended []*subscription
	for _, sub := range subs {
		if sub.confirm != nil {
			sub.refused = errSubscriptionEnded
			close(sub.confirm)
			sub.confirm = nil
			continue
		}
		ended = append(ended, sub)
	}
	ns.mu.Unlock()
	for _, sub := range ended {
		sub.deliver(PayloadUnsubscribed)
	}
}

// subscribe subscribes channel and waits for the server's confirmation, so
// that nothing published afterwards is missed. The returned func
// unsubscribes it, unless the server has ended the subscription already
// (and it may since have been subscribed anew, which is not the returned
// func's to end).
func (ns *nodeSubscriber) subscribe(ctx context.Context, channel string, deliver func(string)) (func(), error) {
	sub := &subscription{deliver: deliver, confirm: make(chan struct{})}
	confirm := sub.confirm
	ns.mu.Lock()
	ns.subs[channel] = sub
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
			ns.mu.Lock()
			err = sub.refused
			ns.mu.Unlock()
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	unsubscribe := func() {
		ns.mu.Lock()
		mine := ns.subs[channel] == sub
		if mine {
			delete(ns.subs, channel)
			ns.unsubscribing[channel]++
		}
		ns.mu.Unlock()
		if mine {
			ns.unsubscribe(channel, unsubscribeTimeout)
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
