package runtime

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/internal/callbound"
	"github.com/lockgen/lockgen/internal/protocol"
)

// The watchdog keeps held locks alive and fair waiters in their queues with
// one goroutine for the whole Locker. It renews each lock about every
// lease/3, and puts every renewal and heartbeat that is due within the next
// lease/6 into the same round, so that locks taken around the same time stay
// in step.
//
// A round is cut into batches of at most maxBatchCalls calls, most urgent
// first, which the backend sends as one pipeline per node. Up to
// maxBatchesInFlight batches are in flight at once, each sent by a
// short-lived goroutine of its own and bounded by a deadline of its own:
// half the time its most urgent member has left, so that a batch stuck on a
// slow connection leaves time for a retry and holds up no other batch. A
// renewal or heartbeat that failed is retried after a pause that doubles
// with each failure and never exceeds a quarter of the time it has left.
//
// Each lock also has a local deadline: the moment its last successful
// renewal (or its acquire) was sent, plus the lease, minus a drift margin.
// Redis expires the key no earlier than lease after it received the command,
// which is after it was sent, so when the deadline passes without a newer
// successful renewal, the lock may be gone, and the holder's context is
// cancelled before another client can have it (assuming the two clocks run
// at rates within 1% of each other). Only a successful renewal moves the
// deadline, and only forward; a failed one leaves it where it was.
type watchdog struct {
	l *Locker

	mu       sync.Mutex
	renewals map[renewalKey]*renewal
	beats    map[*heartbeat]struct{}
	inflight int // batches sent and not yet applied
	stopped  bool
	// checkedAt is when every held lock was last checked at once (RenewNow,
	// reverify). A lock whose acquire was sent before and registered after
	// missed that check: it is renewed as soon as it registers.
	checkedAt time.Time
	// timer wakes the run loop when the next thing is due; asleepUntil is
	// when it is set to fire, zero while the loop is about to look again
	// anyway. Both change only under mu. Work added for later than
	// asleepUntil needs nothing; work due earlier moves the timer forward
	// (rather than waking the loop to do it), so an Acquire never costs a
	// goroutine wake-up for the watchdog.
	timer       *time.Timer
	asleepUntil time.Time

	done chan struct{}
	exit chan struct{}
}

type renewalKey struct {
	base   string
	kind   Kind
	holder string
}

// renewal is one lock held by one holder id, shared by the Held values that
// hold it (an outer hold and its re-entries).
type renewal struct {
	key      renewalKey
	spec     *lockSpec       // the first holder's heldLock's, which holds this renewal too
	hold     *hold           // the hold renewed: its holder's calls and its fence
	granted  time.Time       // for Event.Held: when the first holder learnt it had the lock
	ctx      context.Context // the first holder's Acquire context, for observers
	due      time.Time       // next renewal
	deadline time.Time       // local deadline, see above
	sending  bool
	failures int // failed attempts since the last success
	// recheck: the master serving the lock changed while a renewal was in
	// flight, which may have reached the old one: renew again at once.
	recheck bool
	// holders of the lock: almost always one, stored in firstHolder.
	holders     []*Held
	firstHolder [1]*Held
	denied      error // the NOPERM that ended it (noperm.go)
	// lostCause is why it ended, once lose has run; inDoubt says that it
	// ran out without an acknowledged renewal, so that a renewal whose
	// reply did not arrive may still have extended it in Redis.
	lostCause error
	inDoubt   bool
	closed    bool // given up by Close, not lost: Release still gives it back
	// claim, until a renewal succeeds, is the call sent in place of the
	// renewal: the claim of a mutex offer counted held before it was
	// claimed (acquisition.claimLater). claimFailed runs if r is lost
	// before that.
	claim       backend.Call
	claimFailed func()
	claimDone   chan struct{} // closed when the claim succeeded or r was lost
}

// renewCall is the call that renews r's lock: its claim, while it has one
// to make.
func (r *renewal) renewCall() backend.Call {
	if r.claim.Script != nil {
		return r.claim
	}
	return r.hold.call(r.key.kind.scripts().renew)
}

// heartbeat keeps a fair waiter's place in the queue while it waits.
type heartbeat struct {
	call    backend.Call
	lease   time.Duration
	due     time.Time
	sending bool
	kept    func(sent time.Time) // called when a heartbeat sent at sent kept the place
	evicted func()               // called when the script says the waiter is not queued

	// placeUntil is when the place runs out unless kept again: a lease
	// after the last request that kept it was sent.
	placeUntil time.Time
	failures   int // failed attempts since the last success

	clock      serverClock // the server's clock, for the deadlines sent (heartbeat_deadline.go)
	refreshed  time.Time   // when the last heartbeat that refreshed the TTLs and got a reply was sent
	refreshing bool        // the heartbeat in flight asks for a refresh
}

func newWatchdog(l *Locker) *watchdog {
	d := &watchdog{
		l:        l,
		renewals: map[renewalKey]*renewal{},
		beats:    map[*heartbeat]struct{}{},
		timer:    time.NewTimer(time.Hour),
		done:     make(chan struct{}),
		exit:     make(chan struct{}),
	}
	if l.caps.WatchMasters != nil {
		l.caps.WatchMasters(l.prefix, d.reverify)
	}
	go d.run()
	return d
}

// reverify is told that the keys affects reports moved to another master.
// A lock held there may not have moved with them (a write not replicated
// before a failover): its renewal goes out now rather than at its next
// tick, and a lock the new master does not have is declared lost within
// about a round trip. The heartbeats of fair waiters there go out now too.
func (d *watchdog) reverify(affects func(key string) bool) {
	now := time.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopped {
		return
	}
	d.checkedAt = now
	found := false
	for _, r := range d.renewals {
		if !affects(r.spec.keys[0]) {
			continue
		}
		found = true
		if r.sending {
			r.recheck = true
		} else {
			r.due = now
		}
	}
	for hb := range d.beats {
		if !hb.sending && affects(hb.call.Keys[0]) {
			found = true
			hb.due = now
		}
	}
	if found {
		d.wakeBefore(now)
	}
}

// wakeBefore makes the run loop look again at t at the latest. d.mu must
// be held.
func (d *watchdog) wakeBefore(t time.Time) {
	if t.Before(d.asleepUntil) {
		d.asleepUntil = t
		d.timer.Reset(max(time.Until(t), 0))
	}
}

// stop ends the goroutine and cancels every held lock's context: nothing
// renews them any more.
func (d *watchdog) stop() {
	d.mu.Lock()
	d.stopped = true
	lost := make([]*renewal, 0, len(d.renewals))
	for k, r := range d.renewals {
		r.closed = true
		lost = append(lost, r)
		delete(d.renewals, k)
	}
	d.mu.Unlock()
	close(d.done)
	<-d.exit
	for _, r := range lost {
		d.lose(r, fmt.Errorf("%w: %s: %w", ErrLockLost, r.spec, ErrClosed))
	}
}

// register adds h as a holder of hl's lock, whose lease in Redis lasts
// hl.validFor from a moment no earlier than hl.acquired (a call sent then;
// for a lock handed over, what is left of the waiter's registration). A new
// renewal is stored in hl (ownRenewal); another holder of the same hold
// joins it.
func (d *watchdog) register(h *Held, hl *heldLock) (*renewal, error) {
	key := renewalKey{hl.spec.base, hl.spec.Kind, hl.hold.key.holder}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopped {
		return nil, ErrClosed
	}
	r := d.renewals[key]
	if r == nil {
		sent, validFor := hl.acquired, hl.validFor
		r = &hl.ownRenewal
		*r = renewal{
			key:      key,
			spec:     hl.spec,
			hold:     hl.hold,
			granted:  hl.granted, // for events: read only when observed
			ctx:      h.parent,
			due:      sent.Add(validFor / 3),
			deadline: sent.Add(validFor - protocol.DriftMargin(validFor)),
		}
		if sent.Before(d.checkedAt) {
			r.due = time.Now() // its acquire was in flight during a check of every lock
		}
		if hl.offerClaim.Script != nil {
			r.claim, r.claimFailed, r.due = hl.offerClaim, hl.claimFailed, sent // claimed at once
			r.claimDone = make(chan struct{})
		}
		r.holders = r.firstHolder[:0]
		d.renewals[key] = r
		d.wakeBefore(callbound.Earliest(r.due, r.deadline))
	}
	r.holders = append(r.holders, h)
	return r, nil
}

// awaitClaim waits until the claim of r's offer, if one is pending, has
// succeeded or r was lost (the watchdog gives r up at its deadline, the
// end of the offer's lease, at the latest), the Locker is closed, or
// halfway to giveUp, the deadline of the release that waits: the release
// call keeps the other half, so that Release stays within the release
// timeout however long the claim's reply takes. A claim not settled by
// then is abandoned (abandonClaim).
func (d *watchdog) awaitClaim(r *renewal, giveUp time.Time) {
	d.mu.Lock()
	pending := r.claim.Script != nil && d.renewals[r.key] == r
	done := r.claimDone
	d.mu.Unlock()
	if !pending {
		return
	}
	t := time.NewTimer(time.Until(giveUp) / 2)
	defer t.Stop()
	select {
	case <-done:
	case <-d.done:
	case <-t.C:
		d.abandonClaim(r)
	}
}

// abandonClaim gives up waiting for the claim of r's offer: the release
// that follows goes out while the claim may still be in flight. Whichever
// runs first in Redis, nothing is held twice (a claim that runs after the
// release is refused, its reply ignored: r is gone by then), but the next
// waiter the claim was to register may not be registered: it is woken to
// try itself (claimFailed) rather than wait a lease for an offer.
func (d *watchdog) abandonClaim(r *renewal) {
	d.mu.Lock()
	claimFailed := r.dropClaim()
	d.mu.Unlock()
	if claimFailed != nil {
		claimFailed()
	}
}

// dropClaim ends r's pending claim, if any, for those waiting on it, and
// returns what to run because it failed (nil if nothing). d.mu must be
// held.
func (r *renewal) dropClaim() (claimFailed func()) {
	claimFailed, r.claimFailed = r.claimFailed, nil
	if r.claim.Script != nil {
		r.claim = backend.Call{}
		close(r.claimDone)
	}
	return claimFailed
}

// unregister removes h from r; the last holder to go stops the renewals.
// If the watchdog had already given r up (lost, or the Locker closed), it
// returns why (wrapping ErrLockLost), and whether a renewal in doubt may
// have kept the lock in Redis.
func (d *watchdog) unregister(h *Held, r *renewal) (lost error, inDoubt bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if i := slices.Index(r.holders, h); i >= 0 {
		r.holders = slices.Delete(r.holders, i, i+1)
	}
	if d.renewals[r.key] != r && !r.closed {
		lost = r.lostCause
		if lost == nil { // given up, and lose not run yet
			lost = fmt.Errorf("%w: %s", ErrLockLost, r.spec)
		}
		return lost, r.inDoubt
	}
	if len(r.holders) == 0 && d.renewals[r.key] == r {
		delete(d.renewals, r.key)
	}
	return nil, false
}

// answerBy is when a heartbeat sent at now must have its reply: before
// the place runs out, or, once it has (its heartbeats failed, or the
// watchdog ran late), within a third of a lease. Such a heartbeat still
// goes out: the place is gone in Redis, or a release handed the waiter the
// lock, and only a heartbeat that gets through tells the waiter (its reply
// 0 wakes it). A deadline already past would fail each one at once, and
// the retry at once, without end.
func (hb *heartbeat) answerBy(now time.Time) time.Time {
	return callbound.Latest(hb.placeUntil, now.Add(hb.lease/3))
}

// heartbeatEvery is how long after the request that last kept a fair
// waiter's place the next heartbeat is due: two thirds of a lease. The
// place lives a lease (so a waiter that died is gone within one), which
// leaves a third of it for retries after a failed heartbeat; and a waiter
// costs Redis one heartbeat per 2/3 lease instead of one per lease/3.
func heartbeatEvery(lease time.Duration) time.Duration { return lease * 2 / 3 }

// addHeartbeat starts keeping hb's place, kept last by a request sent at
// sent, whose reply said the server clock was serverMs.
func (d *watchdog) addHeartbeat(hb *heartbeat, sent time.Time, serverMs int64) {
	d.mu.Lock()
	hb.learnServerClock(serverMs, sent)
	hb.due = sent.Add(heartbeatEvery(hb.lease))
	hb.placeUntil = sent.Add(hb.lease)
	d.beats[hb] = struct{}{}
	d.wakeBefore(hb.due)
	d.mu.Unlock()
}

// touchHeartbeat postpones hb: an acquire attempt sent at sent renewed the
// waiter's place as a heartbeat would have.
func (d *watchdog) touchHeartbeat(hb *heartbeat, sent time.Time, serverMs int64) {
	d.mu.Lock()
	hb.learnServerClock(serverMs, sent)
	hb.due = sent.Add(heartbeatEvery(hb.lease))
	hb.placeUntil = callbound.Latest(hb.placeUntil, sent.Add(hb.lease))
	d.mu.Unlock()
}

func (d *watchdog) removeHeartbeat(hb *heartbeat) {
	d.mu.Lock()
	delete(d.beats, hb)
	d.mu.Unlock()
}

// run is the watchdog goroutine: it sleeps until the next thing due (a
// renewal, a heartbeat or a local deadline), declares locks past their
// deadline lost, and hands what is due to batch senders, as many as there
// is room for in flight. The senders run in goroutines of their own, so
// that a slow Redis never delays the deadlines.
func (d *watchdog) run() {
	defer close(d.exit)
	defer d.timer.Stop()
	// Every sender signals once; there are never more than this many.
	batchDone := make(chan struct{}, maxBatchesInFlight)
	for {
		now := time.Now()
		d.mu.Lock()
		lost, next := d.expire(now)
		var batches []*batch
		if free := maxBatchesInFlight - d.inflight; free > 0 {
			var firstDue time.Time
			if batches, firstDue = d.collect(now, free); len(batches) == 0 {
				next = callbound.Earliest(next, firstDue)
			}
		}
		// With no room in flight, the end of a batch wakes the loop; until
		// then only deadlines matter.
		d.inflight += len(batches)
		if len(batches) > 0 {
			d.asleepUntil = time.Time{} // it looks again at once
		} else {
			d.asleepUntil = next
			// Since Go 1.23 Reset also drops a value not yet received.
			d.timer.Reset(max(time.Until(next), 0))
		}
		d.mu.Unlock()

		for _, r := range lost {
			d.lose(r, fmt.Errorf("%w: %s: no renewal acknowledged within its lease", ErrLockLost, r.spec))
		}
		if len(batches) > 0 {
			for _, b := range batches {
				go d.send(b, batchDone)
			}
			continue // look again at once: deadlines still need watching
		}

		select {
		case <-d.done:
			return
		case <-batchDone:
		case <-d.timer.C:
		}
	}
}

// expire removes the renewals whose local deadline has passed and returns
// them, with the earliest deadline of those left (an hour away if none).
// d.mu must be held.
func (d *watchdog) expire(now time.Time) (lost []*renewal, next time.Time) {
	next = now.Add(time.Hour)
	for k, r := range d.renewals {
		if !now.Before(r.deadline) {
			r.inDoubt = true
			lost = append(lost, r)
			delete(d.renewals, k)
			continue
		}
		next = callbound.Earliest(next, r.deadline)
	}
	return lost, next
}

// lose cancels the contexts of every holder of r with cause.
func (d *watchdog) lose(r *renewal, cause error) {
	d.mu.Lock()
	r.lostCause = cause
	holders := slices.Clone(r.holders)
	claimFailed := r.dropClaim()
	d.mu.Unlock()
	if claimFailed != nil {
		claimFailed()
	}
	for _, h := range holders {
		h.lost(cause)
	}
	d.l.observe(r.ctx, Event{Kind: EventLost, Lock: r.spec.withLease(), Holder: r.key.holder, Fence: r.hold.fence, Held: time.Since(r.granted), Err: cause})
}
