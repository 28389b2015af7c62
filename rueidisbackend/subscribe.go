package rueidisbackend

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"

	"github.com/lockgen/lockgen/runtime"
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
	cancel  context.CancelFunc // ends Receive
	done    chan struct{}      // closed when Receive has returned and deliver will not run again
	stopped atomic.Bool        // ended by its owner (unsubscribe or Close), not by the server

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
// runtime.PayloadUnsubscribed: it wakes its waiters and subscribes again
// wherever the channel lives now.
func (b *Backend) Subscribe(ctx context.Context, channel string, deliver func(string)) (func(), error) {
	ctx, cancelWait := context.WithTimeout(ctx, subscribeTimeout)
	defer cancelWait()
	rctx, cancel := context.WithCancel(context.Background())
	s := &subscription{cancel: cancel, done: make(chan struct{})}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		cancel()
		return nil, errClosed
	}
	b.subs[s] = struct{}{}
	b.mu.Unlock()

	confirmed := make(chan struct{})
	var confirmations atomic.Int64
	rctx = rueidis.WithOnSubscriptionHook(rctx, func(ps rueidis.PubSubSubscription) {
		if ps.Channel != channel || (ps.Kind != "subscribe" && ps.Kind != "ssubscribe") {
			return
		}
		if confirmations.Add(1) == 1 {
			close(confirmed)
			return
		}
		// rueidis resubscribed on a new connection after losing one:
		// wake messages may have been lost meanwhile.
		deliver("all")
	})
	rctx = rueidis.WithOnReceiveReturnHook(rctx, func(err error, cc rueidis.CommandClient) error {
		if s.stopped.Load() {
			// Cancelling Receive only stops listening: the server must be
			// told too, or it keeps sending the channel's messages.
			uctx, cancel := context.WithTimeout(context.Background(), unsubscribeTimeout)
			defer cancel()
			_ = cc.Do(uctx, b.unsubscribeCommand(cc, channel)).Error()
		}
		return err
	})
	var receiveErr error
	go func() {
		defer close(s.done)
		receiveErr = b.client.Receive(rctx, b.subscribeCommand(channel), func(m rueidis.PubSubMessage) {
			deliver(m.Message)
		})
		s.mu.Lock()
		s.ended = true
		live := s.live
		s.mu.Unlock()
		b.forget(s)
		if live && !s.stopped.Load() {
			deliver(runtime.PayloadUnsubscribed)
		}
	}()

	select {
	case <-confirmed:
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
	err := receiveErr
	if err == nil {
		err = errSubscriptionEnded
	}
	return nil, fmt.Errorf("rueidisbackend: subscribe %s: %w", channel, err)
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
