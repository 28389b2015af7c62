package wakeup

import (
	"context"
	"fmt"
	"time"
)

// The subscriptions of the wake channels (lines.go): a channel is
// subscribed when a waiter first needs it, its failure or Redis's denial is
// told to its waiters, and it is dropped once idle for subscriptionLinger.

// subscription is one Subscribe of a channel. ok and unsub are set before
// ready is closed; ended is set when the server ended it or it failed.
type subscription struct {
	ready  chan struct{}
	ok     bool
	ended  bool
	unsub  func()
	denied error // the NOPERM that refused it, if that is why it failed
}

// settled reports whether the Subscribe of s has returned.
func (s *subscription) settled() bool {
	select {
	case <-s.ready:
		return true
	default:
		return false
	}
}

// subscriptionLinger is how long a channel stays subscribed with no waiter.
const subscriptionLinger = 2 * time.Second

// Subscribed reports whether w's channel has a live subscription, so that
// no wake published from now on can be missed.
func (m *Lines) Subscribed(w *Waiter) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := w.ch.sub
	return s != nil && s.settled() && s.ok && !s.ended
}

// Subscribe makes sure w's channel is subscribed, bounded by ctx, and
// reports whether it is. One waiter starts the subscription; it runs in a
// goroutine of its own, so that no waiter waits for it longer than ctx
// allows, whatever the backend does with ctx (go-redis, dialing a Pub/Sub
// connection to a stalled server, waits out its own read timeout).
func (m *Lines) Subscribe(ctx context.Context, w *Waiter) bool {
	m.mu.Lock()
	wc := w.ch
	s := wc.sub
	if s == nil || s.ended {
		s = &subscription{ready: make(chan struct{})}
		wc.sub = s
		go m.startSubscription(context.WithoutCancel(ctx), wc, s, m.closing[wc.name])
	}
	m.mu.Unlock()
	select {
	case <-s.ready:
		return m.Subscribed(w)
	case <-ctx.Done():
		return false
	}
}

// Denial returns why w's channel could not be subscribed if Redis denied
// it (the denied func given to New said so), else nil.
func (m *Lines) Denial(w *Waiter) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s := w.ch.sub; s != nil && s.settled() {
		return s.denied
	}
	return nil
}

// Failed reports whether w's channel tried to subscribe and could not, for
// a reason other than a permission Redis denied: the connection was
// refused or lost, or Redis did not answer.
func (m *Lines) Failed(w *Waiter) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := w.ch.sub
	return s != nil && s.settled() && (!s.ok || s.ended) && s.denied == nil
}

// subscribeBound bounds a subscription that no waiter waits for any more.
const subscribeBound = 5 * time.Second

// startSubscription subscribes wc for s, once the unsubscribe of the same
// channel in flight (closing, if not nil) has returned.
func (m *Lines) startSubscription(ctx context.Context, wc *wakeChannel, s *subscription, closing chan struct{}) {
	ctx, cancel := context.WithTimeout(ctx, subscribeBound)
	defer cancel()
	var err error
	if closing != nil {
		select {
		case <-closing:
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	var unsub func()
	if err == nil {
		unsub, err = m.backend.Subscribe(ctx, wc.name, func(payload string) { m.deliver(wc, s, payload) })
	}
	m.mu.Lock()
	s.ok, s.unsub = err == nil, unsub
	s.ended = s.ended || err != nil
	if err != nil && m.denied(err) {
		s.denied = fmt.Errorf("lockgen: subscribe %s: %w", wc.name, err)
	}
	if m.closed && unsub != nil {
		s.ended = true
	}
	close(s.ready)
	m.mu.Unlock()
}

// unsubscribeIdle drops the channels idle for subscriptionLinger and
// schedules itself again while some channel is idle for a shorter time.
func (m *Lines) unsubscribeIdle() {
	m.mu.Lock()
	m.sweep = nil
	now := time.Now()
	var drop []*wakeChannel
	next := time.Duration(0)
	for name, wc := range m.channels {
		if len(wc.waiters) > 0 || wc.idle.IsZero() {
			continue
		}
		left := subscriptionLinger - now.Sub(wc.idle)
		if wc.sub != nil && !wc.sub.settled() {
			// Its subscription is still being made: dropped now, it would
			// stay subscribed with nobody to unsubscribe it.
			left = max(left, subscriptionLinger/4)
		}
		if left > 0 {
			if next == 0 || left < next {
				next = left
			}
			continue
		}
		delete(m.channels, name)
		if s := wc.sub; s != nil && s.ok && !s.ended {
			s.ended = true
			m.closing[name] = make(chan struct{})
			drop = append(drop, wc)
		}
	}
	if next > 0 && !m.closed {
		m.sweep = time.AfterFunc(next, m.unsubscribeIdle)
	}
	m.mu.Unlock()
	for _, wc := range drop {
		wc.sub.unsub()
		m.mu.Lock()
		close(m.closing[wc.name])
		delete(m.closing, wc.name)
		m.mu.Unlock()
	}
}
