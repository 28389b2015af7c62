package goredis

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/redis/go-redis/v9"

	"github.com/lockgen/lockgen/internal/keyslot"
	"github.com/lockgen/lockgen/internal/protocol"
)

// nodeSubscriber: the go-redis backend's one Pub/Sub connection to one
// node, its receive loop, how it learns that the server confirmed,
// refused or ended a subscription, and its health-check PINGs (which
// Locker.Ping, ping.go, uses too).

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

	// wmu orders the writes of subscribes and unsubscribes with the
	// changes of subs they stand for: an unsubscribe of a channel that a
	// subscribe has just put back into subs would otherwise reach the server
	// after that subscribe's SSUBSCRIBE and end it there, unseen.
	wmu  sync.Mutex
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
	// (ping).
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
		sub.deliver(protocol.WakeAll) // resubscribed after a reconnection
	}
}

// unsubscribed handles an unsubscribe confirmation: the answer to one sent,
// or the server ending the subscription on its own.
func (ns *nodeSubscriber) unsubscribed(channel string) {
	ns.mu.Lock()
	n := ns.owedLess(channel)
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
			if keyslot.Of(ch) == slot {
				delete(ns.unsubscribing, ch)
			}
		}
		for ch := range ns.subs {
			if keyslot.Of(ch) == slot {
				ended = append(ended, ch)
			}
		}
	case "CROSSSLOT":
		for ch := range ns.subs {
			ended = append(ended, ch)
		}
	case "NOPERM":
		ns.refusePending(err)
	case "NOSUB":
		// An unsubscribe on a connection left with no subscription (Valkey
		// answers so where Redis confirms): its confirmation will not come,
		// and which one it was is not said.
		clear(ns.unsubscribing)
	}
	ns.mu.Unlock()
	ns.forget(ended, unsubscribeTimeout)
}

// refusePending refuses every subscription still waiting for its
// confirmation with err, a NOPERM reply on the Pub/Sub connection (which
// names no channel). ns.mu must be held.
func (ns *nodeSubscriber) refusePending(err error) {
	for _, sub := range ns.subs {
		if sub.confirm != nil {
			sub.refused = err
			close(sub.confirm)
			sub.confirm = nil
		}
	}
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
		if sub.end() {
			ended = append(ended, sub)
		}
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
		sub.deliver(backend.PayloadUnsubscribed)
	}
}

// unsubscribe sends the unsubscribe of channel, counted in unsubscribing
// by the caller, unless the channel has been subscribed again meanwhile:
// that subscription is the one the server must keep.
func (ns *nodeSubscriber) unsubscribe(channel string, timeout time.Duration) {
	ns.wmu.Lock()
	defer ns.wmu.Unlock()
	ns.mu.Lock()
	again := ns.subs[channel] != nil
	ns.mu.Unlock()
	err := errSubscriptionEnded // stands for "not sent" when subscribed again
	if !again {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		if ns.sharded {
			err = ns.ps.SUnsubscribe(ctx, channel)
		} else {
			err = ns.ps.Unsubscribe(ctx, channel)
		}
	}
	if err != nil {
		// Not sent: no confirmation will come. go-redis has forgotten the
		// channel all the same, and a connection that could not take the
		// command is dropped with its subscriptions.
		ns.mu.Lock()
		ns.owedLess(channel)
		ns.mu.Unlock()
	}
}

// owedLess takes one owed unsubscribe confirmation of channel off its
// count, and returns the count before. ns.mu must be held.
func (ns *nodeSubscriber) owedLess(channel string) int {
	n := ns.unsubscribing[channel]
	if n > 1 {
		ns.unsubscribing[channel] = n - 1
	} else {
		delete(ns.unsubscribing, channel)
	}
	return n
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
		if sub.end() {
			ended = append(ended, sub)
		}
	}
	ns.mu.Unlock()
	for _, sub := range ended {
		sub.deliver(backend.PayloadUnsubscribed)
	}
}

// end ends sub as the server would: one still waiting for its confirmation
// is refused; a confirmed one is reported (true), to be told
// PayloadUnsubscribed once ns.mu, which must be held, is released.
func (sub *subscription) end() (confirmed bool) {
	if sub.confirm == nil {
		return true
	}
	sub.refused = errSubscriptionEnded
	close(sub.confirm)
	sub.confirm = nil
	return false
}

// subscribe subscribes channel and waits for the server's confirmation, so
// that nothing published afterwards is missed. The returned func
// unsubscribes it, unless the server has ended the subscription already
// (and it may since have been subscribed anew, which is not the returned
// func's to end).
func (ns *nodeSubscriber) subscribe(ctx context.Context, channel string, deliver func(string)) (func(), error) {
	sub := &subscription{deliver: deliver, confirm: make(chan struct{})}
	confirm := sub.confirm
	ns.wmu.Lock()
	ns.mu.Lock()
	ns.subs[channel] = sub
	ns.mu.Unlock()
	var err error
	if ns.sharded {
		err = ns.ps.SSubscribe(ctx, channel)
	} else {
		err = ns.ps.Subscribe(ctx, channel)
	}
	ns.wmu.Unlock()
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
