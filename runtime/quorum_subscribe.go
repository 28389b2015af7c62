package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
)

// Subscribe subscribes channel on every server and returns once each has
// confirmed or failed; a majority must confirm. Any release of the lock
// by a majority publishes on at least one server of that majority, since
// two majorities share a server. Messages are passed on, except that a
// hand-over ("grant:<fence>:<holder>") speaks for one server only and
// becomes "all": the waiter it names tries, and finds the lock its own
// there. When one server ends its subscription on its own (a Cluster slot
// moved), the others are unsubscribed and the Locker is told
// PayloadUnsubscribed, so that it subscribes again everywhere.
func (q *quorumBackend) Subscribe(ctx context.Context, channel string, deliver func(payload string)) (func(), error) {
	s := &quorumSub{deliver: deliver, unsubs: make([]func(), len(q.members))}
	type result struct {
		member int
		unsub  func()
		err    error
	}
	results := make(chan result, len(q.members))
	for i, m := range q.members {
		go func() {
			unsub, err := m.b.Subscribe(ctx, channel, s.forward)
			results <- result{i, unsub, err}
		}()
	}
	var errs []error
	confirmed := 0
	for range q.members {
		r := <-results
		if r.err != nil {
			errs = append(errs, fmt.Errorf("server %d: %w", r.member+1, r.err))
			continue
		}
		confirmed++
		s.add(r.member, r.unsub)
	}
	if confirmed < q.majority {
		s.unsubscribe()
		return nil, errors.Join(append([]error{fmt.Errorf("%w: subscribe %s: %d of %d servers confirmed, %d needed", ErrNoQuorum, channel, confirmed, len(q.members), q.majority)}, errs...)...)
	}
	return s.unsubscribe, nil
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
	case payload == PayloadUnsubscribed:
		s.ended.Do(func() {
			// deliver must not block: the other servers are
			// unsubscribed in the background.
			go s.unsubscribe()
			s.deliver(PayloadUnsubscribed)
		})
	case strings.HasPrefix(payload, "grant:"):
		s.deliver("all")
	default:
		s.deliver(payload)
	}
}
