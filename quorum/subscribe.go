package quorum

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/internal/protocol"
)

// Subscribe subscribes channel on every server and returns once a
// majority has confirmed (or so many failed that no majority can): any
// release of the lock by a majority publishes on at least one server of
// that majority, since two majorities share a server, so a frozen server
// does not hold up the waiter. The others join when they confirm. Messages are passed on, except that a
// hand-over ("grant:<fence>:<holder>") speaks for one server only and
// becomes "all": the waiter it names tries, and finds the lock its own
// there. When one server ends its subscription on its own (a Cluster slot
// moved), the others are unsubscribed and the Locker is told
// PayloadUnsubscribed, so that it subscribes again everywhere.
func (q *quorumBackend) Subscribe(ctx context.Context, channel string, deliver func(payload string)) (func(), error) {
	s := &quorumSub{deliver: deliver, unsubs: make([]func(), len(q.members))}
	results := make(chan subscribeResult, len(q.members))
	// The servers that confirm after the majority still join, so their
	// subscriptions must outlive the caller's ctx; lateSubscribeTimeout
	// bounds them instead.
	mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), lateSubscribeTimeout)
	for i, m := range q.members {
		go func() {
			unsub, err := m.b.Subscribe(mctx, channel, s.forward)
			results <- subscribeResult{i, unsub, err}
		}()
	}
	confirmed, received, errs := q.awaitSubscriptions(ctx, s, results)
	// The servers that have not answered yet join the subscription when
	// they confirm (or are unsubscribed at once if it has ended).
	go func() {
		defer cancel()
		for range len(q.members) - received {
			if r := <-results; r.err == nil {
				s.add(r.member, r.unsub)
			}
		}
	}()
	if confirmed < q.majority {
		s.unsubscribe()
		return nil, errors.Join(append([]error{fmt.Errorf("%w: subscribe %s: %d of %d servers confirmed, %d needed", ErrNoQuorum, channel, confirmed, len(q.members), q.majority)}, errs...)...)
	}
	return s.unsubscribe, nil
}

// lateSubscribeTimeout bounds the subscription of a server that has not
// confirmed when a majority has.
const lateSubscribeTimeout = 5 * time.Second

// awaitSubscriptions reads the members' results until a majority confirmed,
// so many failed that no majority can, or ctx ends; the confirmed ones are
// added to s. It returns how many confirmed, how many results it read,
// and the failures.
func (q *quorumBackend) awaitSubscriptions(ctx context.Context, s *quorumSub, results <-chan subscribeResult) (confirmed, received int, errs []error) {
	for confirmed < q.majority && len(errs) <= len(q.members)-q.majority {
		select {
		case r := <-results:
			received++
			if r.err != nil {
				errs = append(errs, fmt.Errorf("server %d: %w", r.member+1, r.err))
				continue
			}
			confirmed++
			s.add(r.member, r.unsub)
		case <-ctx.Done():
			return confirmed, received, append(errs, ctx.Err())
		}
	}
	return confirmed, received, errs
}

// subscribeResult is one server's answer to a Subscribe.
type subscribeResult struct {
	member int
	unsub  func()
	err    error
}

// quorumSub is one channel subscribed on the servers of a quorum.
type quorumSub struct {
	deliver func(string)
	ended   sync.Once

	mu     sync.Mutex
	unsubs []func() // per server; nil where not subscribed
	done   bool
}

func (s *quorumSub) add(member int, unsub func()) {
	s.mu.Lock()
	done := s.done
	if !done {
		s.unsubs[member] = unsub
	}
	s.mu.Unlock()
	if done {
		unsub()
	}
}

// unsubscribe ends the subscription on every server; it is idempotent.
func (s *quorumSub) unsubscribe() {
	s.mu.Lock()
	unsubs := s.unsubs
	s.unsubs, s.done = make([]func(), len(unsubs)), true
	s.mu.Unlock()
	for _, u := range unsubs {
		if u != nil {
			u()
		}
	}
}

// forward passes a server's message on to the Locker.
func (s *quorumSub) forward(payload string) {
	switch {
	case payload == backend.PayloadUnsubscribed:
		s.ended.Do(func() {
			// deliver must not block: the other servers are
			// unsubscribed in the background.
			go s.unsubscribe()
			s.deliver(backend.PayloadUnsubscribed)
		})
	case strings.HasPrefix(payload, protocol.GrantPrefix):
		s.deliver(protocol.WakeAll)
	default:
		s.deliver(payload)
	}
}
