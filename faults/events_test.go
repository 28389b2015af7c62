package faults

import (
	"sync"
	"testing"
	"time"

	"github.com/lockgen/lockgen/runtime"
)

// eventLog records the events of a Locker with the time they were seen, so
// that a case can wait for one (a waiter's first busy reply, a lost lock)
// instead of sleeping.
type eventLog struct {
	mu     sync.Mutex
	events []stamped
	added  chan struct{} // closed and replaced at every event
}

type stamped struct {
	runtime.Event
	at time.Time
}

func newEventLog() *eventLog { return &eventLog{added: make(chan struct{})} }

// observe is the Observer; it is called synchronously by the runtime, so it
// only appends.
func (l *eventLog) observe(e runtime.Event) {
	l.mu.Lock()
	l.events = append(l.events, stamped{Event: e, at: time.Now()})
	close(l.added)
	l.added = make(chan struct{})
	l.mu.Unlock()
}

// find returns the first event of kind for holder ("" for any holder).
func (l *eventLog) find(kind runtime.EventKind, holder string) (stamped, bool, chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range l.events {
		if e.Kind == kind && (holder == "" || e.Holder == holder) {
			return e, true, nil
		}
	}
	return stamped{}, false, l.added
}

// wait returns the first event of kind for holder, waiting up to d for it.
func (l *eventLog) wait(t *testing.T, kind runtime.EventKind, holder string, d time.Duration) stamped {
	t.Helper()
	e, ok := l.waitFor(kind, holder, d)
	if !ok {
		t.Fatalf("no %v event for holder %q within %v; events: %v", kind, holder, d, l.summary())
	}
	return e
}

// waitFor is wait without failing the test.
func (l *eventLog) waitFor(kind runtime.EventKind, holder string, d time.Duration) (stamped, bool) {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		e, ok, added := l.find(kind, holder)
		if ok {
			return e, true
		}
		select {
		case <-added:
		case <-deadline.C:
			return stamped{}, false
		}
	}
}

// holders returns the holder ids that appear in the log, in order.
func (l *eventLog) holders() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var ids []string
	seen := map[string]bool{}
	for _, e := range l.events {
		if e.Holder != "" && !seen[e.Holder] {
			seen[e.Holder] = true
			ids = append(ids, e.Holder)
		}
	}
	return ids
}

// summary lists the events for a failure message.
func (l *eventLog) summary() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, 0, len(l.events))
	for _, e := range l.events {
		s := e.Kind.String() + " " + e.Holder
		if e.Err != nil {
			s += " (" + e.Err.Error() + ")"
		}
		out = append(out, s)
	}
	return out
}

// waitCleanedUp returns once the runtime has given back whatever the
// attempts of holder with an unknown outcome may have taken or queued
// (runtime.EventCleanedUp for holder), or after cleanupBound. Call it once
// the fault is over (the sleep ended, the pause lifted, the proxy forwards
// again). It does not fail by itself when no event comes, so that a holder
// with nothing to clean up is only slower to check; the caller then checks
// that no trace is left.
func waitCleanedUp(t *testing.T, e *env, s *subject, holder string) {
	t.Helper()
	_ = e
	s.ev.waitFor(runtime.EventCleanedUp, holder, cleanupBound)
}
