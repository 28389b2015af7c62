package watchdog

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/internal/callbound"
)

// Config is what a Watchdog needs from its owner.
type Config struct {
	// Send runs a batch of calls and returns their replies, one per call
	// (the backend's EvalBatch).
	Send func(ctx context.Context, calls []backend.Call) []backend.Reply
	// Denied, if not nil, reports an error reply that ends a lock at once
	// (a permission denial the owner names): retrying cannot help.
	Denied func(error) bool
	// Closed is the error Register and RenewNow return after Stop.
	Closed error
}

// Watchdog renews the locks registered with it and sends the heartbeats
// added to it, from one goroutine (see the package doc).
type Watchdog struct {
	cfg Config

	mu       sync.Mutex
	renewals map[Key]*Renewal
	beats    map[*Heartbeat]struct{}
	inflight int // batches sent and not yet applied
	stopped  bool
	// checkedAt is when every held lock was last checked at once (RenewNow,
	// Reverify). A lock whose acquire was sent before and registered after
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

// New starts a Watchdog; Stop ends it.
func New(cfg Config) *Watchdog {
	if cfg.Denied == nil {
		cfg.Denied = func(error) bool { return false }
	}
	d := &Watchdog{
		cfg:      cfg,
		renewals: map[Key]*Renewal{},
		beats:    map[*Heartbeat]struct{}{},
		timer:    time.NewTimer(time.Hour),
		done:     make(chan struct{}),
		exit:     make(chan struct{}),
	}
	go d.run()
	return d
}

// Reverify is told that the keys affects reports moved to another master
// (backend.Caps.WatchMasters). A lock held there may not have moved with
// them (a write not replicated before a failover): its renewal goes out
// now rather than at its next tick, and a lock the new master does not
// have is declared lost within about a round trip. The heartbeats of fair
// waiters there go out now too.
func (d *Watchdog) Reverify(affects func(key string) bool) {
	now := time.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopped {
		return
	}
	d.checkedAt = now
	found := false
	for _, r := range d.renewals {
		if !affects(r.firstKey) {
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
		if !hb.sending && affects(hb.Call.Keys[0]) {
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
func (d *Watchdog) wakeBefore(t time.Time) {
	if t.Before(d.asleepUntil) {
		d.asleepUntil = t
		d.timer.Reset(max(time.Until(t), 0))
	}
}

// Stop ends the goroutine and tells every registered lock's Owner it is
// lost (Closed): nothing renews them any more.
func (d *Watchdog) Stop() {
	d.mu.Lock()
	d.stopped = true
	lost := make([]*Renewal, 0, len(d.renewals))
	for k, r := range d.renewals {
		r.closed = true
		lost = append(lost, r)
		delete(d.renewals, k)
	}
	d.mu.Unlock()
	close(d.done)
	<-d.exit
	for _, r := range lost {
		d.lose(r, r.owner.Cause(Closed, nil))
	}
}

// run is the watchdog goroutine: it sleeps until the next thing due (a
// renewal, a heartbeat or a local deadline), declares locks past their
// deadline lost, and hands what is due to batch senders, as many as there
// is room for in flight. The senders run in goroutines of their own, so
// that a slow Redis never delays the deadlines.
func (d *Watchdog) run() {
	defer close(d.exit)
	defer d.timer.Stop()
	// Every sender signals once; there are never more than this many.
	batchDone := make(chan struct{}, MaxBatchesInFlight)
	for {
		now := time.Now()
		d.mu.Lock()
		lost, next := d.expire(now)
		var batches []*batch
		if free := MaxBatchesInFlight - d.inflight; free > 0 {
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
			d.lose(r, r.owner.Cause(Expired, nil))
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
func (d *Watchdog) expire(now time.Time) (lost []*Renewal, next time.Time) {
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

// lose records cause as why r ended, runs the claim's failure if one was
// pending, and tells r's Owner, with r's holders.
func (d *Watchdog) lose(r *Renewal, cause error) {
	d.mu.Lock()
	r.lostCause = cause
	holders := slices.Clone(r.holders)
	claimFailed := r.dropClaim()
	d.mu.Unlock()
	if claimFailed != nil {
		claimFailed()
	}
	r.owner.Lost(cause, holders)
}
