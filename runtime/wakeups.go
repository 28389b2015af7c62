package runtime

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// wakeups multiplexes the wake channels of every waiter of a Locker onto the
// backend's Pub/Sub connections, and hands each message to the waiters it
// concerns (docs/design.md, wake messages).
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
type wakeups struct {
	backend Backend

	mu       sync.Mutex
	channels map[string]*wakeChannel
	closing  map[string]chan struct{} // unsubscribes in flight, by channel
	sweep    *time.Timer              // pending sweep of idle channels; nil if none
	closed   bool
}

// settled reports whether the Subscribe of s has returned.
func (s *wakeSub) settled() bool {
	select {
	case <-s.ready:
		return true
	default:
		return false
	}
}

// subscriptionLinger is how long a channel stays subscribed with no waiter.
const subscriptionLinger = 2 * time.Second

type wakeChannel struct {
	name    string
	waiters []*waiter // in the order they joined
	sub     *wakeSub
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
	// Locker to a waiter of this Locker (see releaseStarts).
	nearRun int
}

// nearHandOvers bounds the mutex hand-overs in a row that stay in one
// process while the waiters of other processes wait: a release names a
// waiter of its own process (mutex_release's ARGV[5]) until this many in a
// row went to one, then lets the first registration have the lock. A
// hand-over in the process is dated by the release's reply and needs no
// claim before the waiter returns; one to another process needs the
// message and a claim. A waiter of another process waits at most this many
// holds more per turn of the processes.
const nearHandOvers = 3

// wakeSub is one Subscribe of a channel. ok and unsub are set before
// ready is closed; ended is set when the server ended it or it failed.
type wakeSub struct {
	ready  chan struct{}
	ok     bool
	ended  bool
	unsub  func()
	denied error // the NOPERM that refused it, if that is why it failed
}

// waiter is one acquire call waiting on one lock.
type waiter struct {
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
	// or heartbeat that kept its place). See acquisition.handedOver.
	placeKept time.Time
	lapsed    bool // a request kept the place after it may have lapsed
	// granted says that a "grant:<fence>:<holder>" message handed the lock
	// to this waiter, with fence grantFence.
	granted    bool
	grantFence int64
	// grantSent is when the release whose own reply told of the grant was
	// sent (zero for a grant learnt from a message): see
	// acquisition.handedOver.
	grantSent time.Time
	// heldBack: a grant message came while a release of this Locker was
	// in flight; the waiter is woken by that release's end.
	heldBack bool
	// ahead: the call that took the lock for the waiter ahead of this one
	// in line registered this one in Redis (mutex_acquire's ARGV[5]).
	ahead bool
}

func newWakeups(b Backend) *wakeups {
	return &wakeups{backend: b, channels: map[string]*wakeChannel{}, closing: map[string]chan struct{}{}}
}

// join registers a waiter on channel, without subscribing. A waiter in
// line (a mutex waiter) gets its turn at once if it is active already (it
// has been told busy, and is registered in Redis) or no waiter in line is
// ahead of it; otherwise when those ahead have left.
func (m *wakeups) join(channel, holder string, inLine, active bool) *waiter {
	m.mu.Lock()
	defer m.mu.Unlock()
	wc := m.channels[channel]
	if wc == nil {
		wc = &wakeChannel{name: channel}
		m.channels[channel] = wc
	}
	return wc.add(holder, inLine, active)
}

// joinExisting is join for a caller that has not tried yet: it joins only
// a channel that has waiters or a subscription already, and returns nil
// otherwise, so that an uncontended acquire costs the wake-ups nothing.
func (m *wakeups) joinExisting(channel, holder string, inLine bool) *waiter {
	m.mu.Lock()
	defer m.mu.Unlock()
	wc := m.channels[channel]
	if wc == nil {
		return nil
	}
	return wc.add(holder, inLine, false)
}

func (wc *wakeChannel) add(holder string, inLine, active bool) *waiter {
	w := &waiter{holder: holder, wake: make(chan struct{}, 1), inLine: inLine, turn: make(chan struct{}), ch: wc}
	if !inLine || active || wc.firstInLine() == nil {
		w.open()
	}
	wc.waiters = append(wc.waiters, w)
	wc.idle = time.Time{}
	return w
}

func (wc *wakeChannel) firstInLine() *waiter {
	for _, w := range wc.waiters {
		if w.inLine {
			return w
		}
	}
	return nil
}

// open gives w its turn.
func (w *waiter) open() {
	if !w.hasTurn {
		w.hasTurn = true
		close(w.turn)
	}
}

// subscribed reports whether w's channel has a live subscription, so that
// no wake published from now on can be missed.
func (m *wakeups) subscribed(w *waiter) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := w.ch.sub
	return s != nil && s.settled() && s.ok && !s.ended
}

// subscribe makes sure w's channel is subscribed, bounded by ctx, and
// reports whether it is. One waiter starts the subscription; it runs in a
// goroutine of its own, so that no waiter waits for it longer than ctx
// allows, whatever the backend does with ctx (go-redis, dialing a Pub/Sub
// connection to a stalled server, waits out its own read timeout).
func (m *wakeups) subscribe(ctx context.Context, w *waiter) bool {
	m.mu.Lock()
	wc := w.ch
	s := wc.sub
	if s == nil || s.ended {
		s = &wakeSub{ready: make(chan struct{})}
		wc.sub = s
		go m.startSubscription(context.WithoutCancel(ctx), wc, s, m.closing[wc.name])
	}
	m.mu.Unlock()
	select {
	case <-s.ready:
		return m.subscribed(w)
	case <-ctx.Done():
		return false
	}
}

// denial returns why w's channel could not be subscribed if Redis denied
// it (ErrNoPermission), else nil.
func (m *wakeups) denial(w *waiter) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s := w.ch.sub; s != nil && s.settled() {
		return s.denied
	}
	return nil
}

// failed reports whether w's channel tried to subscribe and could not, for
// a reason other than a permission Redis denied: the connection was
// refused or lost, or Redis did not answer.
func (m *wakeups) failed(w *waiter) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := w.ch.sub
	return s != nil && s.settled() && (!s.ok || s.ended) && s.denied == nil
}

// subscribeBound bounds a subscription that no waiter waits for any more.
const subscribeBound = 5 * time.Second

// startSubscription subscribes wc for s, once the unsubscribe of the same
// channel in flight (closing, if not nil) has returned.
func (m *wakeups) startSubscription(ctx context.Context, wc *wakeChannel, s *wakeSub, closing chan struct{}) {
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
	if permissionDenied(err) {
		s.denied = fmt.Errorf("lockgen: subscribe %s: %w", wc.name, err)
	}
	if m.closed && unsub != nil {
		s.ended = true
	}
	close(s.ready)
	m.mu.Unlock()
}

// placeKept records that a request sent at sent kept w's place for
// keptFor. One sent when the previous one's place may have lapsed starts a
// new registration, and a grant message that comes later may answer the
// lapsed one (published while the waiter was frozen or cut off, and
// delivered since): from then on w's grants are only hints (see grant).
func (m *wakeups) placeKept(w *waiter, sent time.Time, keptFor time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !w.placeKept.IsZero() && sent.Sub(w.placeKept) >= keptFor {
		w.lapsed = true
	}
	if sent.After(w.placeKept) {
		w.placeKept = sent
	}
}

// grant reports whether a message handed the lock to w since the last
// call, with its fence, the send time of the latest request that kept
// w's place, and whether w's place may have lapsed since it first
// registered (the grant may then be stale: it must be claimed).
func (m *wakeups) grant(w *waiter) (g grantSeen, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ok, w.granted = w.granted, false
	sent := w.grantSent
	w.grantSent = time.Time{}
	return grantSeen{w.grantFence, w.placeKept, w.lapsed, sent}, ok
}

// grantSeen is what a waiter knows of a grant message addressed to it.
type grantSeen struct {
	fence     int64
	placeKept time.Time
	lapsed    bool
	// releaseSent: the grant was learnt from the reply of a release of
	// this Locker sent then; zero if from a message, which may be late.
	releaseSent time.Time
}

// rename gives w a new holder id (an acquisition goes on under a new one
// after a transient error, acquire_recover.go). A grant to the old one is no longer
// w's: the clean-up of the old id gives it back.
func (m *wakeups) rename(w *waiter, holder string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	w.holder, w.granted, w.placeKept, w.grantSent = holder, false, time.Time{}, time.Time{}
}

// leave removes w. The next waiter in line gets its turn; a wake w did not
// use goes to the next waiter without one, so that a waiter giving up does
// not swallow an "n:<N>" meant for the process; with nudge (family.nudges,
// and w got the lock) the next waiter is woken anyway. The last waiter to
// leave marks the channel idle; the sweep unsubscribes it later.
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

// unsubscribeIdle drops the channels idle for subscriptionLinger and
// schedules itself again while some channel is idle for a shorter time.
func (m *wakeups) unsubscribeIdle() {
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

// deliver hands one message of subscription s to the waiters of wc it
// concerns. Unknown payloads wake everyone: a spurious wake costs one
// attempt, a missed one costs a whole wait.
func (m *wakeups) deliver(wc *wakeChannel, s *wakeSub, payload string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case payload == PayloadUnsubscribed:
		// The server ended the subscription: the next busy reply of a
		// waiter subscribes again, wherever the channel lives now.
		s.ended = true
		wakeAll(wc)
	case strings.HasPrefix(payload, "grant:"):
		switch fence, mine, ok := wc.grant(payload); {
		case !ok:
			wakeAll(wc)
		case !mine:
			m.foreignOffer(wc, fence)
		}
	case strings.HasPrefix(payload, "taken:"):
		if !wc.taken(payload) {
			wakeAll(wc)
		}
	case strings.HasPrefix(payload, "n:"):
		n, err := strconv.Atoi(payload[len("n:"):])
		if err != nil {
			n = len(wc.waiters)
		}
		// A waiter already holding a wake-up is about to retry anyway; the
		// wake goes to the next one.
		for _, w := range wc.waiters {
			if n <= 0 {
				break
			}
			if trySignal(w) {
				n--
			}
		}
	default:
		wakeAll(wc)
	}
}

// releaseStarts records a release of this Locker's hold on the lock of
// channel, about to be sent, and returns what releaseEnds takes (nil if
// no waiter of this Locker is on that channel). For a mutex (near set) it
// also returns the holder id of the first waiter in this process's line,
// for the release to offer the lock to if it is registered, unless
// nearHandOvers in a row went to this process already ("" then).
func (m *wakeups) releaseStarts(channel string, near bool) (*wakeChannel, string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	wc := m.channels[channel]
	if wc == nil {
		return nil, ""
	}
	wc.releasing++
	if !near || wc.nearRun >= nearHandOvers {
		return wc, ""
	}
	if w := wc.firstInLine(); w != nil {
		return wc, w.holder
	}
	return wc, ""
}

// releaseEnds ends a release that releaseStarts recorded. grant is what
// its reply said (the wake message it published, "" if none or no
// reply), sent when it was sent. A waiter of this Locker that the grant
// names hears of it as soon as the releaser does, rather than after the
// message, which comes later to the same effect (or came first, and was
// held back for this reply); and it knows the grant was current when the
// release was sent (a mutex waiter counts the offer held from then,
// acquisition.offerHeld).
func (m *wakeups) releaseEnds(wc *wakeChannel, grant string, sent time.Time) {
	if wc == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	wc.releasing--
	if grant != "" {
		if _, mine, _ := wc.grantAt(grant, sent); mine {
			wc.nearRun++
		} else {
			wc.nearRun = 0
		}
	}
	if wc.releasing > 0 {
		return
	}
	for _, w := range wc.waiters {
		if w.heldBack {
			w.heldBack = false
			trySignal(w)
		}
	}
}

// grant marks and wakes the waiter that payload, "grant:<fence>:<holder>",
// handed the lock to, if it waits here. It reports whether payload was
// well formed. A grant comes twice to a waiter of the releaser's Locker
// (the release's reply, then the message): the second is ignored, since a
// second wake-up that the waiter does not use would go on to another
// waiter when it leaves, for an attempt that is bound to be busy.
func (wc *wakeChannel) grant(payload string) (fence int64, mine, ok bool) {
	return wc.grantAt(payload, time.Time{})
}

// grantAt is grant for a grant learnt from a release reply sent at sent
// (zero: from a message). The reply dates the grant even if the message
// came first, as long as the waiter has not taken the grant yet.
func (wc *wakeChannel) grantAt(payload string, sent time.Time) (fence int64, mine, ok bool) {
	fs, holder, _ := strings.Cut(payload[len("grant:"):], ":")
	f, err := strconv.ParseInt(fs, 10, 64)
	if err != nil || holder == "" {
		return 0, false, false
	}
	for _, w := range wc.waiters {
		if w.holder == holder {
			mine = true
			switch {
			case w.grantFence != f:
				w.granted, w.grantFence, w.grantSent = true, f, sent
				// A mutex waiter offered the lock claims it now, even
				// if others of its process are ahead of it in line:
				// they wait for offers of their own, and an offer
				// left unclaimed would lapse with nobody to try.
				w.open()
				if sent.IsZero() && wc.releasing > 0 {
					// Most likely that release's offer: its reply,
					// due about now, dates it (releaseEnds wakes w).
					w.heldBack = true
				} else {
					trySignal(w)
				}
			case w.granted && !sent.IsZero():
				// The reply, after the message: it dates the grant
				// the waiter has not taken yet.
				w.grantSent = sent
				if w.heldBack {
					w.heldBack = false
					trySignal(w)
				}
			}
		}
	}
	return f, mine, true
}

func wakeAll(wc *wakeChannel) {
	for _, w := range wc.waiters {
		trySignal(w)
	}
}

// offerLapse is how long after a mutex offer to another process's waiter
// this process's first waiter tries, unless "taken:<fence>" came first:
// the offer's lease in Redis (LG_OFFER_MS) and a margin for the clocks.
const offerLapse = 600 * time.Millisecond

// nextInLine returns the mutex waiter behind w in its process's line, and
// its holder id, if it is not registered yet; nil if there is none.
func (m *wakeups) nextInLine(w *waiter) (*waiter, string) {
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

// registered records that a call registered w under holder in Redis; a
// waiter renamed since is not registered.
func (m *wakeups) registered(w *waiter, holder string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if w.holder == holder {
		w.ahead = true
	}
}

// unregistered undoes registered, for a claim that did not register w
// after all (it failed), and wakes w: it tries itself now rather than
// wait for an offer that will not come.
func (m *wakeups) unregistered(w *waiter) {
	m.mu.Lock()
	defer m.mu.Unlock()
	w.ahead = false
	trySignal(w)
}

// registeredAhead reports whether w, whose turn it is, was registered by
// the call of the waiter ahead of it.
func (m *wakeups) registeredAhead(w *waiter) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return w.ahead
}

// foreignOffer starts (or moves) wc's offer timer for an offer of fence to
// a waiter of another process.
func (m *wakeups) foreignOffer(wc *wakeChannel, fence int64) {
	if wc.firstInLine() == nil {
		return
	}
	wc.offerFence = fence
	if wc.offer != nil {
		wc.offer.Reset(offerLapse)
		return
	}
	wc.offer = time.AfterFunc(offerLapse, func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		if w := wc.firstInLine(); w != nil {
			trySignal(w)
		}
	})
}

// taken stops wc's offer timer: the offer of fence was claimed.
func (wc *wakeChannel) taken(payload string) bool {
	f, err := strconv.ParseInt(payload[len("taken:"):], 10, 64)
	if err != nil {
		return false
	}
	if wc.offer != nil && f >= wc.offerFence {
		wc.offer.Stop()
	}
	return true
}
