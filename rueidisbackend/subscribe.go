package rueidisbackend

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/redis/rueidis"
)

const (
	// subscribeTimeout bounds a Subscribe whose context allows longer: a
	// waiter whose node does not answer does without wake messages (its
	// wait is bounded by the lease anyway) rather than hang.
	subscribeTimeout = 5 * time.Second
	// unsubscribeTimeout bounds the UNSUBSCRIBE sent when a subscription
	// is ended by its owner.
	unsubscribeTimeout = 5 * time.Second
)

// errSubscriptionEnded: the subscription ended before the server confirmed
// it (the connection was lost, or the server refused it).
var errSubscriptionEnded = errors.New("the subscription ended before it was confirmed")

// subscription is one channel subscribed through rueidis's Receive, which
// runs in a goroutine of its own until the subscription ends.
type subscription struct {
	channel   string
	deliver   func(string)
	cancel    context.CancelFunc // ends Receive
	confirmed chan struct{}      // closed at the server's first confirmation
	done      chan struct{}      // closed when Receive has returned and deliver will not run again
	err       error              // Receive's, read after done is closed
	stopped   atomic.Bool        // ended by its owner (unsubscribe or Close), not by the server

	mu    sync.Mutex
	live  bool // Subscribe returned it to the Locker
	ended bool // Receive has returned
}

// stop ends the subscription and waits until its deliver cannot run again.
func (s *subscription) stop() {
	s.stopped.Store(true)
	s.cancel()
	<-s.done
}

// Subscribe runs rueidis's Receive for channel in a goroutine and returns
// once the server has confirmed the subscription. rueidis carries it on the
// connection it shares with commands (RESP3), one per node; on a Cluster
// the channel is a shard channel, sent to the node of its slot.
//
// When the connection is lost, rueidis subscribes again on a new one by
// itself (unless the client was built with DisableRetry); that second
// confirmation delivers "all", since wake messages may have been lost in
// between. Receive returns when the server ends the subscription (a slot
// that moved: SUNSUBSCRIBE nobody asked for) or rueidis gives up; the
// channel is then no longer subscribed, and the Locker is told so with
// backend.PayloadUnsubscribed: it wakes its waiters and subscribes again
// wherever the channel lives now.
func (b *Backend) Subscribe(ctx context.Context, channel string, deliver func(string)) (func(), error) {
	ctx, cancelWait := context.WithTimeout(ctx, subscribeTimeout)
	defer cancelWait()
	rctx, cancel := context.WithCancel(context.Background())
	s := &subscription{channel: channel, deliver: deliver, cancel: cancel, confirmed: make(chan struct{}), done: make(chan struct{})}
	if !b.track(s) {
		cancel()
		return nil, errClosed
	}
	go b.receive(b.hooks(rctx, s), s)

	select {
	case <-s.confirmed:
		s.mu.Lock()
		ended := s.ended
		s.live = !ended
		s.mu.Unlock()
		if !ended {
			return func() { b.forget(s); s.stop() }, nil
		}
		<-s.done
	case <-s.done:
	case <-ctx.Done():
		s.stop()
		b.forget(s)
		return nil, fmt.Errorf("rueidisbackend: subscribe %s: %w", channel, ctx.Err())
	}
	err := s.err
	if err == nil {
		err = errSubscriptionEnded
	}
	return nil, fmt.Errorf("rueidisbackend: subscribe %s: %w", channel, err)
}

// track adds s to the subscriptions Close must end; false once b is closed.
func (b *Backend) track(s *subscription) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return false
	}
	b.subs[s] = struct{}{}
	return true
}

// hooks returns ctx with the rueidis hooks of s: the server's first
// confirmation of the channel closes s.confirmed, a later one (rueidis
// resubscribed on a new connection after losing one) delivers "all", since
// wake messages may have been lost meanwhile; and a Receive ended by the
// owner of s unsubscribes on the server too.
func (b *Backend) hooks(ctx context.Context, s *subscription) context.Context {
	var confirmations atomic.Int64
	ctx = rueidis.WithOnSubscriptionHook(ctx, func(ps rueidis.PubSubSubscription) {
		if ps.Channel != s.channel || (ps.Kind != "subscribe" && ps.Kind != "ssubscribe") {
			return
		}
		if confirmations.Add(1) == 1 {
			close(s.confirmed)
			return
		}
		s.deliver("all")
	})
	return rueidis.WithOnReceiveReturnHook(ctx, func(err error, cc rueidis.CommandClient) error {
		if s.stopped.Load() {
			// Cancelling Receive only stops listening: the server must be
			// told too, or it keeps sending the channel's messages.
			uctx, cancel := context.WithTimeout(context.Background(), unsubscribeTimeout)
			defer cancel()
			_ = cc.Do(uctx, b.unsubscribeCommand(cc, s.channel)).Error()
		}
		return err
	})
}

// receive runs rueidis's Receive for s until the subscription ends, then
// tells the Locker that the channel is no longer subscribed, unless the
// Locker ended it or never had it.
func (b *Backend) receive(ctx context.Context, s *subscription) {
	defer close(s.done)
	s.err = b.client.Receive(ctx, b.subscribeCommand(s.channel), func(m rueidis.PubSubMessage) {
		s.deliver(m.Message)
	})
	s.mu.Lock()
	s.ended = true
	live := s.live
	s.mu.Unlock()
	b.forget(s)
	if live && !s.stopped.Load() {
		s.deliver(backend.PayloadUnsubscribed)
	}
}

func (b *Backend) subscribeCommand(channel string) rueidis.Completed {
	if b.cluster {
		return b.client.B().Ssubscribe().Channel(channel).Build()
	}
	return b.client.B().Subscribe().Channel(channel).Build()
}

func (b *Backend) unsubscribeCommand(cc rueidis.CommandClient, channel string) rueidis.Completed {
	if b.cluster {
		return cc.B().Sunsubscribe().Channel(channel).Build()
	}
	return cc.B().Unsubscribe().Channel(channel).Build()
}

// forget drops s from the subscriptions Close must end.
func (b *Backend) forget(s *subscription) {
	b.mu.Lock()
	delete(b.subs, s)
	b.mu.Unlock()
}
