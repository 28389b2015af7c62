package runtime

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// wakeups multiplexes the wake channels of every waiter of a Locker onto the
// backend's Pub/Sub connections. A channel is subscribed when its first
// waiter joins; each message is handed to the waiters it concerns
// (docs/design.md, wake messages).
//
// A channel whose last waiter leaves stays subscribed for subscriptionLinger
// and is then unsubscribed by a sweep in the background. The waiter that
// leaves is usually the one that just got the lock, so an unsubscribe there
// would sit between the grant and the return of Acquire; and on a hot key
// the next waiter finds the channel still subscribed and saves the
// SUBSCRIBE round trip.
type wakeups struct {
	backend Backend

	// opMu orders the backend's subscribe and unsubscribe calls in the order
	// the map below changed, so that an unsubscribe of a channel's old entry
	// can never land after the subscribe of its new one.
	opMu sync.Mutex

	mu       sync.Mutex
	channels map[string]*wakeChannel
	sweep    *time.Timer // pending sweep of idle channels; nil if none
	closed   bool
}

// subscriptionLinger is how long a channel stays subscribed with no waiter.
const subscriptionLinger = 2 * time.Second

type wakeChannel struct {
	name    string
	waiters []*waiter // in the order they joined: "n:<N>" wakes the longest waiting first
	ready   chan struct{}
	unsub   func()    // nil if the subscription failed
	idle    time.Time // when the last waiter left; zero while it has waiters

	// grantWakesNext: a grant wakes one more parked waiter of this process
	// (mutex), whose attempt makes it the next heir; see deliver.
	grantWakesNext bool

	// retryBy is the earliest retry time a busy reply gave a waiter of this
	// channel that has not passed yet (zero if none): some waiter of this
	// process tries again by then even if no wake message comes. A newcomer
	// that queues behind the waiters without trying (joinLive) sleeps until
	// then at most, so that a lost message costs it no more than them.
	retryBy time.Time
}

// waiter is one acquire call waiting on one lock.
type waiter struct {
	holder string
	wake   chan struct{} // capacity 1: a wake that comes while not waiting is kept
	ch     *wakeChannel

	// parked is set once the waiter relies on a release to wake it: it got
	// a busy reply, or it queued behind such waiters without trying.
	// Waiters not parked yet are about to try and need no nudge.
	parked bool

	// placeKept is when the latest request that registered the waiter for
	// a hand-over was sent, among those whose reply said so: a busy acquire
	// or a heartbeat that kept its place in a fair queue, a busy mutex
	// acquire that made it the heir. A lock handed over to the waiter
	// (grant) lives in Redis until that registration would have run out,
	// which is at least a lease after it was sent: the holder counts its
	// lease from there.
	placeKept time.Time
	// granted says that a "grant:<fence>:<holder>" message handed the lock
	// to this waiter, with fence grantFence.
	granted    bool
	grantFence int64
}

func newWakeups(b Backend) *wakeups {
	return &wakeups{backend: b, channels: map[string]*wakeChannel{}}
}

// join registers a waiter on channel and returns once the channel is
// subscribed (or the subscription failed, in which case the waiter still
// works, on its timer alone, and the error is returned with it).
func (m *wakeups) join(ctx context.Context, channel, holder string, grantWakesNext bool) (*waiter, error) {
	w := &waiter{holder: holder, wake: make(chan struct{}, 1)}
	m.mu.Lock()
	wc := m.channels[channel]
	first := wc == nil
	if first {
		wc = &wakeChannel{name: channel, ready: make(chan struct{}), grantWakesNext: grantWakesNext}
		m.channels[channel] = wc
	}
	wc.waiters = append(wc.waiters, w)
	wc.idle = time.Time{}
	w.ch = wc
	m.mu.Unlock()

	if !first {
		select {
		case <-wc.ready:
			return w, nil
		case <-ctx.Done():
			return w, ctx.Err()
		}
	}
	m.opMu.Lock()
	unsub, err := m.backend.Subscribe(ctx, channel, func(payload string) { m.deliver(wc, payload) })
	m.opMu.Unlock()
	m.mu.Lock()
	wc.unsub = unsub
	if err != nil && m.channels[channel] == wc {
		// Let the next waiter try again instead of inheriting the failure.
		delete(m.channels, channel)
	}
	close(wc.ready)
	m.mu.Unlock()
	return w, err
}

// joinLive registers a waiter on channel only if the channel is already
// subscribed, without waiting for anything; it returns nil otherwise. A
// waiter that joins before its first attempt can lose no wake message, so
// it needs no second attempt right after its first busy reply.
//
// queueBehind, if not zero, says that parked waiters of this process are
// already queued on the channel and the earliest time one of them will try
// again on its own. The caller may then queue behind them without trying at
// all (no barging inside a process; see acquireOne); the waiter is then
// parked from the start.
func (m *wakeups) joinLive(channel, holder string, queue bool) (w *waiter, queueBehind time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	wc := m.channels[channel]
	if wc == nil || wc.unsub == nil {
		return nil, time.Time{}
	}
	select {
	case <-wc.ready:
	default:
		return nil, time.Time{} // still subscribing: take the ordinary path
	}
	w = &waiter{holder: holder, wake: make(chan struct{}, 1), ch: wc}
	if queue && wc.retryBy.After(time.Now()) && slices.ContainsFunc(wc.waiters, func(x *waiter) bool { return x.parked }) {
		queueBehind = wc.retryBy
		w.parked = true
	}
	wc.waiters = append(wc.waiters, w)
	wc.idle = time.Time{}
	return w, queueBehind
}

// busy records that w got a busy reply, to an attempt sent at sent, telling
// it to retry by retryAt; kept says that the reply registered w for a
// hand-over (see waiter.placeKept).
func (m *wakeups) busy(w *waiter, sent, retryAt time.Time, kept bool) {
	wc := w.ch
	m.mu.Lock()
	defer m.mu.Unlock()
	w.parked = true
	if kept && sent.After(w.placeKept) {
		w.placeKept = sent
	}
	if wc.retryBy.IsZero() || !wc.retryBy.After(time.Now()) || retryAt.Before(wc.retryBy) {
		wc.retryBy = retryAt
	}
}

// placeKept records that a heartbeat sent at sent kept w's place.
func (m *wakeups) placeKept(w *waiter, sent time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if sent.After(w.placeKept) {
		w.placeKept = sent
	}
}

// grant reports whether a message handed the lock to w, with its fence and
// the moment its lease counts from (see waiter.placeKept).
func (m *wakeups) grant(w *waiter) (fence int64, leaseFrom time.Time, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return w.grantFence, w.placeKept, w.granted && !w.placeKept.IsZero()
}

// leave removes w. If w had been woken and not used the wake-up, it passes
// it on to the next waiter without one, so that a waiter giving up does not
// swallow an "n:1" meant for the process.
//
// With nudge (w got a semaphore permit, see Kind.nudgesNextWaiter, or a
// mutex without having waited, see acquireOne), the next parked waiter is
// woken as well. The scripts publish on release only if someone got busy
// since the lock was granted, and the waiters asleep here got busy before
// (or queued behind those who did): without one more attempt from one of
// them, the release of the lock w just got would publish nothing and they
// would sleep until their retry timers (a whole lease). That attempt marks
// the lock. Waiters not parked yet are about to try anyway.
//
// The last waiter to leave marks the channel idle; the sweep unsubscribes
// it later.
func (m *wakeups) leave(w *waiter, nudge bool) {
	wc := w.ch
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, x := range wc.waiters {
		if x == w {
			wc.waiters = append(wc.waiters[:i], wc.waiters[i+1:]...)
			break
		}
	}
	select {
	case <-w.wake:
		if w.granted {
			break // the script gives the lock back (Kind.scripts().leave)
		}
		// Unused: it goes to the first waiter without one, parked or not,
		// since one that is not parked yet may have had its attempt run
		// before the release the wake is about.
		for _, x := range wc.waiters {
			if trySignal(x) {
				break
			}
		}
	default:
	}
	if nudge {
		for _, x := range wc.waiters {
			if x.parked {
				signal(x)
				break
			}
		}
	}
	if len(wc.waiters) > 0 || m.channels[wc.name] != wc {
		return
	}
	wc.idle = time.Now()
	wc.retryBy = time.Time{}
	if m.sweep == nil && !m.closed {
		m.sweep = time.AfterFunc(subscriptionLinger, m.unsubscribeIdle)
	}
}

// unsubscribeIdle drops the channels idle for subscriptionLinger and
// schedules itself again while some channel is idle for a shorter time.
//
// It holds opMu while it unsubscribes, so that a new subscription of a
// dropped channel (join takes opMu too) reaches the backend after the
// unsubscribe.
func (m *wakeups) unsubscribeIdle() {
	m.opMu.Lock()
	defer m.opMu.Unlock()
	m.mu.Lock()
	m.sweep = nil
	now := time.Now()
	var drop []*wakeChannel
	next := time.Duration(0)
	for name, wc := range m.channels {
		if len(wc.waiters) > 0 || wc.idle.IsZero() {
			continue
		}
		if left := subscriptionLinger - now.Sub(wc.idle); left > 0 {
			if next == 0 || left < next {
				next = left
			}
			continue
		}
		delete(m.channels, name)
		drop = append(drop, wc)
	}
	if next > 0 && !m.closed {
		m.sweep = time.AfterFunc(next, m.unsubscribeIdle)
	}
	m.mu.Unlock()
	for _, wc := range drop {
		if wc.unsub != nil {
			wc.unsub()
		}
	}
}

// close stops the sweep; the backend's Close ends the subscriptions.
func (m *wakeups) close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	if m.sweep != nil {
		m.sweep.Stop()
		m.sweep = nil
	}
}

func signal(w *waiter) { trySignal(w) }

// trySignal wakes w and reports whether it did; it does not if w already
// has a wake-up pending.
func trySignal(w *waiter) bool {
	select {
	case w.wake <- struct{}{}:
		return true
	default:
		return false
	}
}

// deliver hands one wake message to the waiters of wc it concerns.
// Unknown payloads wake everyone: a spurious wake costs one attempt, a
// missed one costs a whole wait.
func (m *wakeups) deliver(wc *wakeChannel, payload string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case strings.HasPrefix(payload, "grant:"):
		// "grant:<fence>:<holder>": the lock handed to holder.
		fence, holder, _ := strings.Cut(payload[len("grant:"):], ":")
		f, err := strconv.ParseInt(fence, 10, 64)
		if err != nil || holder == "" {
			wakeAll(wc)
			return
		}
		for _, w := range wc.waiters {
			if w.holder == holder {
				w.granted, w.grantFence = true, f
				signal(w)
			}
		}
		// A mutex has one heir at a time. The process's next parked waiter
		// tries once, so that the grant just made gets an heir too: then
		// its release hands over again, instead of waking waiters that
		// must come and take it. Each process sends one such attempt, so
		// every process has a chance at the next turn.
		if wc.grantWakesNext {
			for _, w := range wc.waiters {
				if w.holder != holder && w.parked && trySignal(w) {
					break
				}
			}
		}
	case strings.HasPrefix(payload, "n:"):
		n, err := strconv.Atoi(payload[len("n:"):])
		if err != nil {
			n = len(wc.waiters)
		}
		for _, w := range wc.waiters {
			if n <= 0 {
				break
			}
			// A waiter already holding a wake-up is about to retry anyway;
			// the wake goes to the next one.
			if trySignal(w) {
				n--
			}
		}
	default:
		wakeAll(wc)
	}
}

func wakeAll(wc *wakeChannel) {
	for _, w := range wc.waiters {
		signal(w)
	}
}
