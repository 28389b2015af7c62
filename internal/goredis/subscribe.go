package goredis

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lockgen/lockgen/internal/callerr"
	"github.com/redis/go-redis/v9"
)

// The go-redis backend's side of Subscribe: it finds the node that serves a
// channel, follows the channel's slot when it moves, and keeps one
// nodeSubscriber (nodesub.go) per node.

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
		return nil, callerr.ErrClosed
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
