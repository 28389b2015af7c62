package luashim

import "slices"

// cmdPublish is PUBLISH and SPUBLISH: both reach every Subscribe callback
// of the channel.
func cmdPublish(c *call, args []string) any { return c.s.publish(args[1], args[2]) }

// subscription is one Subscribe callback. active turns false on
// unsubscribe, so messages published before that but not yet delivered
// are dropped, as a real unsubscribe would drop them.
type subscription struct {
	channel string
	fn      func(channel, payload string)
	active  bool
}

// message is a published payload with the subscribers counted at publish
// time.
type message struct {
	channel, payload string
	to               []*subscription
}

// Subscribe calls fn for every message published on channel (by PUBLISH or
// SPUBLISH, from a script or Do) from now until unsubscribe is called.
// Callbacks run after the publishing script has finished, outside the
// server's lock, in publish order, on the goroutine that published (or on
// another publisher's goroutine that is delivering at the time). A callback
// may call back into the server.
func (s *Server) Subscribe(channel string, fn func(channel, payload string)) (unsubscribe func()) {
	sub := &subscription{channel: channel, fn: fn, active: true}
	s.mu.Lock()
	s.subs[channel] = append(s.subs[channel], sub)
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if !sub.active {
			return
		}
		sub.active = false
		// Deleting in place is safe: a queued message holds its own copy.
		list := slices.DeleteFunc(s.subs[channel], func(x *subscription) bool { return x == sub })
		if len(list) == 0 {
			delete(s.subs, channel)
		} else {
			s.subs[channel] = list
		}
	}
}

// publish queues payload for channel's current subscribers and returns how
// many there are, which is PUBLISH's reply. Called with mu held.
func (s *Server) publish(channel, payload string) int64 {
	subs := s.subs[channel]
	if len(subs) == 0 {
		return 0
	}
	to := append([]*subscription(nil), subs...)
	s.pending = append(s.pending, message{channel: channel, payload: payload, to: to})
	return int64(len(to))
}

// unlockAndDeliver releases mu and then delivers queued messages, unless
// another goroutine is already delivering (it will deliver ours too, after
// its own, which keeps publish order).
func (s *Server) unlockAndDeliver() {
	if len(s.pending) == 0 || s.delivering {
		s.mu.Unlock()
		return
	}
	s.delivering = true
	finished := false
	defer func() {
		if !finished { // a callback panicked: the next publisher delivers
			s.mu.Lock()
			s.delivering = false
			s.mu.Unlock()
		}
	}()
	for len(s.pending) > 0 {
		batch := s.pending
		s.pending = nil
		s.mu.Unlock()
		for _, m := range batch {
			for _, sub := range m.to {
				s.mu.Lock()
				active := sub.active
				s.mu.Unlock()
				if active {
					sub.fn(m.channel, m.payload)
				}
			}
		}
		s.mu.Lock()
	}
	s.delivering = false
	finished = true
	s.mu.Unlock()
}
