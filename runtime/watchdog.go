package runtime

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// The watchdog keeps held locks alive and fair waiters in their queues with
// one goroutine for the whole Locker. It renews each lock about every
// lease/3, and puts every renewal and heartbeat that is due within the next
// lease/6 into the same batch, which the backend sends as one pipeline per
// node. Locks taken around the same time thus stay in step and cost one
// round trip per tick however many there are.
//
// Each lock also has a local deadline: the moment its last successful
// renewal (or its acquire) was sent, plus the lease, minus a drift margin.
// Redis expires the key no earlier than lease after it received the command,
// which is after it was sent, so when the deadline passes without a newer
// successful renewal, the lock may be gone, and the holder's context is
// cancelled before another client can have it (assuming the two clocks run
// at rates within 1% of each other).
type watchdog struct {
	l *Locker

	mu       sync.Mutex
	renewals map[renewalKey]*renewal
	beats    map[*heartbeat]struct{}
	inflight bool
	stopped  bool
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
	spec     lockSpec
	call     Call
	fence    int64
	acquired time.Time
	due      time.Time // next renewal
	deadline time.Time // local deadline, see above
	sending  bool
	holders  map[*Held]struct{}
}

// heartbeat keeps a fair waiter's place in the queue while it waits.
type heartbeat struct {
	call    Call
	lease   time.Duration
	due     time.Time
	sending bool
	kept    func(sent time.Time) // called when a heartbeat sent at sent kept the place
	evicted func()               // called when the script says the waiter is not queued
}

// driftMargin is how much earlier than the lease the local deadline falls:
// 1% for clock rate differences plus 2ms for timer slack.
func driftMargin(lease time.Duration) time.Duration { return lease/100 + 2*time.Millisecond }

func newWatchdog(l *Locker) *watchdog {
	d := &watchdog{
		l:        l,
		renewals: map[renewalKey]*renewal{},
		beats:    map[*heartbeat]struct{}{},
		timer:    time.NewTimer(time.Hour),
		done:     make(chan struct{}),
		exit:     make(chan struct{}),
	}
	go d.run()
	return d
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
		lost = append(lost, r)
		delete(d.renewals, k)
	}
	d.mu.Unlock()
	close(d.done)
	<-d.exit
	for _, r := range lost {
		d.lose(r, fmt.Errorf("%w: %s: %w", ErrLockLost, &r.spec, ErrClosed))
	}
}

// register adds h as a holder of the lock spec held by holder, whose
// lease in Redis lasts validFor from a moment no earlier than sent (a call
// sent at sent; for a lock handed over, what is left of the waiter's
// registration). A re-entry joins the renewal of the outer hold.
func (d *watchdog) register(h *Held, spec lockSpec, holder string, fence int64, sent time.Time, validFor time.Duration) (*renewal, error) {
	key := renewalKey{spec.base, spec.Kind, holder}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopped {
		return nil, ErrClosed
	}
	r := d.renewals[key]
	if r == nil {
		r = &renewal{
			key:      key,
			spec:     spec,
			call:     Call{Script: spec.Kind.scripts().renew, Keys: spec.keys, Args: spec.args(holder, d.l.publish, false)},
			fence:    fence,
			acquired: sent,
			due:      sent.Add(validFor / 3),
			deadline: sent.Add(validFor - driftMargin(validFor)),
			holders:  map[*Held]struct{}{},
		}
		d.renewals[key] = r
		d.wakeBefore(earliest(r.due, r.deadline))
	}
	r.holders[h] = struct{}{}
	return r, nil
}

// unregister removes h from r; the last holder to go stops the renewals.
func (d *watchdog) unregister(h *Held, r *renewal) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(r.holders, h)
	if len(r.holders) == 0 && d.renewals[r.key] == r {
		delete(d.renewals, r.key)
	}
}

func (d *watchdog) addHeartbeat(hb *heartbeat) {
	d.mu.Lock()
	d.beats[hb] = struct{}{}
	d.wakeBefore(hb.due)
	d.mu.Unlock()
}

// touchHeartbeat postpones hb: an acquire attempt sent at sent renewed the
// waiter's place as a heartbeat would have.
func (d *watchdog) touchHeartbeat(hb *heartbeat, sent time.Time) {
	d.mu.Lock()
	hb.due = sent.Add(hb.lease / 3)
	d.mu.Unlock()
}

func (d *watchdog) removeHeartbeat(hb *heartbeat) {
	d.mu.Lock()
	delete(d.beats, hb)
	d.mu.Unlock()
}

// run is the watchdog goroutine: it sleeps until the next thing due (a
// renewal, a heartbeat or a local deadline), declares locks past their
// deadline lost, and sends a batch of what is due. One batch is in flight at
// a time; it runs in a second goroutine so that a slow Redis never delays
// the deadlines.
func (d *watchdog) run() {
	defer close(d.exit)
	defer d.timer.Stop()
	batchDone := make(chan struct{}, 1)
	for {
		now := time.Now()
		var lost []*renewal
		var calls []Call
		var rs []*renewal
		var hbs []*heartbeat
		next := now.Add(time.Hour)

		d.mu.Lock()
		firstDue := next
		for k, r := range d.renewals {
			if !now.Before(r.deadline) {
				lost = append(lost, r)
				delete(d.renewals, k)
				continue
			}
			next = earliest(next, r.deadline)
			if !r.sending {
				firstDue = earliest(firstDue, r.due)
			}
		}
		for hb := range d.beats {
			if !hb.sending {
				firstDue = earliest(firstDue, hb.due)
			}
		}
		switch {
		case d.inflight:
			// The batch's end wakes us; until then only deadlines matter.
		case firstDue.After(now):
			next = earliest(next, firstDue)
		default:
			// Something is due: everything due within its lease/6 goes too.
			for _, r := range d.renewals {
				if !r.sending && !r.due.After(now.Add(r.spec.lease/6)) {
					r.sending = true
					rs = append(rs, r)
					calls = append(calls, r.call)
				}
			}
			for hb := range d.beats {
				if !hb.sending && !hb.due.After(now.Add(hb.lease/6)) {
					hb.sending = true
					hbs = append(hbs, hb)
					calls = append(calls, hb.call)
				}
			}
		}
		if len(calls) > 0 {
			d.inflight = true
			d.asleepUntil = time.Time{} // it looks again at once
		} else {
			d.asleepUntil = next
			// Since Go 1.23 Reset also drops a value not yet received.
			d.timer.Reset(max(time.Until(next), 0))
		}
		d.mu.Unlock()

		for _, r := range lost {
			d.lose(r, fmt.Errorf("%w: %s: no renewal acknowledged within its lease", ErrLockLost, &r.spec))
		}
		if len(calls) > 0 {
			go d.send(now, calls, rs, hbs, batchDone)
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

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// send runs one batch and applies its replies.
func (d *watchdog) send(sent time.Time, calls []Call, rs []*renewal, hbs []*heartbeat, done chan<- struct{}) {
	timeout := time.Hour
	for _, r := range rs {
		timeout = min(timeout, r.spec.lease/3)
	}
	for _, hb := range hbs {
		timeout = min(timeout, hb.lease/3)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	replies := d.l.backend.EvalBatch(ctx, calls)
	cancel()

	var lost []*renewal
	var renewed []*renewal
	var evicted []func()
	var kept []func(time.Time)
	now := time.Now()
	d.mu.Lock()
	for i, r := range rs {
		rep := replies[i]
		r.sending = false
		if d.renewals[r.key] != r {
			continue // released or lost meanwhile
		}
		switch v, ok := rep.Value.(int64); {
		case rep.Err != nil || !ok:
			// Try again soon; the deadline decides when to give up.
			r.due = now.Add(min(r.spec.lease/10, 100*time.Millisecond))
		case v == 1:
			r.due = sent.Add(r.spec.lease / 3)
			r.deadline = sent.Add(r.spec.lease - driftMargin(r.spec.lease))
			renewed = append(renewed, r)
		default:
			delete(d.renewals, r.key)
			lost = append(lost, r)
		}
	}
	for j, hb := range hbs {
		rep := replies[len(rs)+j]
		hb.sending = false
		if _, ok := d.beats[hb]; !ok {
			continue
		}
		switch v, ok := rep.Value.(int64); {
		case rep.Err != nil || !ok:
			hb.due = now.Add(min(hb.lease/10, 100*time.Millisecond))
		case v == 1:
			hb.due = sent.Add(hb.lease / 3)
			kept = append(kept, hb.kept)
		default:
			hb.due = sent.Add(hb.lease / 3)
			evicted = append(evicted, hb.evicted)
		}
	}
	d.inflight = false
	d.mu.Unlock()

	for _, r := range renewed {
		d.l.observe(Event{Kind: EventRenewed, Lock: r.spec.withLease(), Holder: r.key.holder, Fence: r.fence})
	}
	for _, r := range lost {
		d.lose(r, fmt.Errorf("%w: %s: renewal refused, the lock is no longer held", ErrLockLost, &r.spec))
	}
	for _, f := range kept {
		f(sent)
	}
	for _, f := range evicted {
		f()
	}
	done <- struct{}{}
}

// lose cancels the contexts of every holder of r with cause.
func (d *watchdog) lose(r *renewal, cause error) {
	d.mu.Lock()
	holders := make([]*Held, 0, len(r.holders))
	for h := range r.holders {
		holders = append(holders, h)
	}
	d.mu.Unlock()
	for _, h := range holders {
		h.lost(cause)
	}
	d.l.observe(Event{Kind: EventLost, Lock: r.spec.withLease(), Holder: r.key.holder, Fence: r.fence, Held: time.Since(r.acquired), Err: cause})
}
