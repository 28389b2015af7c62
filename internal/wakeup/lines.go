package wakeup

import (
	"sync"
	"time"

	"github.com/lockgen/lockgen/backend"
)

// Lines multiplexes the wake channels of every waiter of a Locker onto the
// backend's Pub/Sub connections, and hands each message to the waiters it
// concerns (docs/design.md, wake messages). Its methods are safe for
// concurrent use.
//
// A channel is subscribed when a waiter first needs it (after its first busy
// reply) and stays subscribed while it has waiters and for
// subscriptionLinger after the last one left: the waiter that leaves is
// usually the one that just got the lock, and on a hot key the next waiter
// then finds the channel subscribed and saves the SUBSCRIBE round trip. A
// subscription can end on its own (the server moved the channel's Cluster
// slot: PayloadUnsubscribed) or fail; its waiters are woken, and the next
// busy reply of any of them subscribes again, on the slot's current owner.
//
// No lock is held across a call to the backend. Subscribes and unsubscribes
// of one channel are kept in order by closing: a subscribe waits until an
// unsubscribe of the same channel in flight has returned.
//
// Mutex waiters of one process queue here, in arrival order, and only the
// first of them talks to Redis: one registration per process and lock, so
// that what a grant costs does not grow with the number of waiters or
// processes, and a goroutine that releases and asks again at once cannot
// take the lock back from the waiters of its own process.
type Lines struct {
	backend backend.Backend
	denied  func(error) bool // whether a Subscribe error is Redis refusing the ACL user

	mu       sync.Mutex
	channels map[string]*wakeChannel
	closing  map[string]chan struct{} // unsubscribes in flight, by channel
	sweep    *time.Timer              // pending sweep of idle channels; nil if none
	closed   bool
}

type wakeChannel struct {
	name    string
	waiters []*Waiter // in the order they joined
	sub     *subscription
	idle    time.Time // when the last waiter left; zero while it has waiters

	// offer is pending while a mutex offer to a waiter of another process
	// is not known to be claimed: when it fires, the first waiter in line
	// tries, and takes the lock if the offer lapsed (its waiter died).
	offer      *time.Timer
	offerFence int64

	// releasing counts the releases of this Locker's holds on the lock in
	// flight: a grant message that comes while one is waits for its reply,
	// which dates it (see grantAt).
	releasing int
	// nearRun counts the mutex hand-overs in a row from a release of this
	// Locker to a waiter of this Locker (see ReleaseStarts).
	nearRun int
}

// Waiter is one acquire call (or latch awaiter) waiting on one lock's
// wake channel. Its fields are guarded by its Lines' mutex.
type Waiter struct {
	holder string
	wake   chan struct{} // capacity 1: a wake that comes while not asleep is kept
	ch     *wakeChannel

	// inLine: a mutex waiter, which attempts only when it is the first of
	// the process's waiters in line on the channel; turn is closed then.
	inLine  bool
	turn    chan struct{}
	hasTurn bool

	// placeKept is when the latest request that registered the waiter for
	// a hand-over was sent, among those whose reply said so (a fair acquire
	// or heartbeat that kept its place). See PlaceKept.
	placeKept time.Time
	lapsed    bool // a request kept the place after it may have lapsed
	// since is when the first request that could register the waiter's
	// holder id was sent (see Named).
	since time.Time
	// granted says that a "grant:<fence>:<holder>" message handed the lock
	// to this waiter, with fence grantFence.
	granted    bool
	grantFence int64
	// grantSent is when the release whose own reply told of the grant was
	// sent (zero for a grant learnt from a message): see
	// Grant.ReleaseSent.
	grantSent time.Time
	// heldBack: a grant message came while a release of this Locker was
	// in flight; the waiter is woken by that release's end.
	heldBack bool
	// ahead: the call that took the lock for the waiter ahead of this one
	// in line registered this one in Redis (mutex_acquire's ARGV[5]).
	ahead bool
}

// New returns the wake-ups of a Locker whose backend is b. denied tells a
// Subscribe error that is Redis refusing the command for the ACL user from
// any other failure (see Denial).
func New(b backend.Backend, denied func(error) bool) *Lines {
	if denied == nil {
		denied = func(error) bool { return false }
	}
	return &Lines{backend: b, denied: denied, channels: map[string]*wakeChannel{}, closing: map[string]chan struct{}{}}
}

// Wake receives a wake-up for w: a message (or the end of its
// subscription) that may have changed the lock. One that comes while w is
// not asleep is kept for its next receive.
func (w *Waiter) Wake() <-chan struct{} { return w.wake }

// Turn is closed once w may attempt: at once for a waiter not in line,
// else when it is first of its process's mutex waiters, or offered the
// lock.
func (w *Waiter) Turn() <-chan struct{} { return w.turn }

// Signal gives w a wake-up unless one is pending already, and reports
// whether it did.
func (w *Waiter) Signal() bool { return trySignal(w) }

// Join registers a waiter on channel, without subscribing. A waiter in
// line (a mutex waiter) gets its turn at once if it is active already (it
// has been told busy, and is registered in Redis) or no waiter in line is
// ahead of it; otherwise when those ahead have left.
func (m *Lines) Join(channel, holder string, inLine, active bool) *Waiter {
	m.mu.Lock()
	defer m.mu.Unlock()
	wc := m.channels[channel]
	if wc == nil {
		wc = &wakeChannel{name: channel}
		m.channels[channel] = wc
	}
	return wc.add(holder, inLine, active)
}

// JoinExisting is Join for a caller that has not tried yet: it joins only
// a channel that has waiters or a subscription already, and returns nil
// otherwise, so that an uncontended acquire costs the wake-ups nothing.
func (m *Lines) JoinExisting(channel, holder string, inLine bool) *Waiter {
	m.mu.Lock()
	defer m.mu.Unlock()
	wc := m.channels[channel]
	if wc == nil {
		return nil
	}
	return wc.add(holder, inLine, false)
}

func (wc *wakeChannel) add(holder string, inLine, active bool) *Waiter {
	w := &Waiter{holder: holder, wake: make(chan struct{}, 1), inLine: inLine, turn: make(chan struct{}), ch: wc}
	if !inLine || active || wc.firstInLine() == nil {
		w.open()
	}
	wc.waiters = append(wc.waiters, w)
	wc.idle = time.Time{}
	return w
}

func (wc *wakeChannel) firstInLine() *Waiter {
	for _, w := range wc.waiters {
		if w.inLine {
			return w
		}
	}
	return nil
}

// open gives w its turn.
func (w *Waiter) open() {
	if !w.hasTurn {
		w.hasTurn = true
		close(w.turn)
	}
}

// Rename gives w a new holder id (an acquisition goes on under a new one
// after a transient error). A grant to the old one is
// no longer w's: the clean-up of the old id gives it back.
func (m *Lines) Rename(w *Waiter, holder string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	w.holder, w.granted, w.placeKept, w.grantSent, w.since = holder, false, time.Time{}, time.Time{}, time.Time{}
}

// Leave removes w. The next waiter in line gets its turn; a wake w did not
// use goes to the next waiter without one, so that a waiter giving up does
// not swallow an "n:<N>" meant for the process; with nudge (w got a lock
// whose grant may not remember that others wait, so that the next release
// would publish nothing) the next waiter is woken anyway. The last waiter
// to leave marks the channel idle; the sweep unsubscribes it later.
func (m *Lines) Leave(w *Waiter, nudge bool) {
	wc := w.ch
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, x := range wc.waiters {
		if x == w {
			wc.waiters = append(wc.waiters[:i], wc.waiters[i+1:]...)
			break
		}
	}
	if w.inLine {
		if next := wc.firstInLine(); next != nil {
			next.open()
		}
	}
	select {
	case <-w.wake:
		nudge = nudge || !w.granted && !w.inLine
	default:
	}
	if nudge {
		for _, x := range wc.waiters {
			if trySignal(x) {
				break
			}
		}
	}
	if len(wc.waiters) > 0 || m.channels[wc.name] != wc {
		return
	}
	if s := wc.sub; s == nil || s.ended {
		delete(m.channels, wc.name) // nothing to unsubscribe
		return
	}
	wc.idle = time.Now()
	if m.sweep == nil && !m.closed {
		m.sweep = time.AfterFunc(subscriptionLinger, m.unsubscribeIdle)
	}
}

// Close stops the sweep; the backend's Close ends the subscriptions.
func (m *Lines) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	if m.sweep != nil {
		m.sweep.Stop()
		m.sweep = nil
	}
}

// trySignal wakes w and reports whether it did; it does not if w already
// has a wake-up pending.
func trySignal(w *Waiter) bool {
	select {
	case w.wake <- struct{}{}:
		return true
	default:
		return false
	}
}

// NextInLine returns the mutex waiter behind w in its process's line, and
// its holder id, if it is not registered yet; nil if there is none.
func (m *Lines) NextInLine(w *Waiter) (*Waiter, string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	behind := false
	for _, x := range w.ch.waiters {
		switch {
		case x == w:
			behind = true
		case behind && x.inLine:
			if x.ahead {
				return nil, ""
			}
			return x, x.holder
		}
	}
	return nil, ""
}

// Registered records that a call registered w under holder in Redis; a
// waiter renamed since is not registered.
func (m *Lines) Registered(w *Waiter, holder string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if w.holder == holder {
		w.ahead = true
	}
}

// Unregistered undoes Registered, for a claim that did not register w
// after all (it failed), and wakes w: it tries itself now rather than
// wait for an offer that will not come.
func (m *Lines) Unregistered(w *Waiter) {
	m.mu.Lock()
	defer m.mu.Unlock()
	w.ahead = false
	trySignal(w)
}

// RegisteredAhead reports whether w, whose turn it is, was registered by
// the call of the waiter ahead of it.
func (m *Lines) RegisteredAhead(w *Waiter) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return w.ahead
}

// InLine counts the mutex waiters in line, on every channel: a waiter
// joins the line without a call to Redis, so this is how a test of the
// Locker knows it has.
func (m *Lines) InLine() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, wc := range m.channels {
		for _, w := range wc.waiters {
			if w.inLine {
				n++
			}
		}
	}
	return n
}
