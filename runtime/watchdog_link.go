package runtime

import (
	"context"
	"fmt"
	"time"

	"github.com/lockgen/lockgen/internal/watchdog"
)

// The Locker's watchdog (internal/watchdog) renews held locks about every
// lease/3, in batches, and declares one lost at its local deadline: the
// send of its last acknowledged renewal plus the lease, minus a drift
// margin, before Redis can have given it to another. It also sends the
// heartbeats that keep fair waiters in their queues. This file links it to
// the Locker: a heldLock's renewal is its Owner, which words the causes of
// a loss and tells the lock's holders and the observers.

// heartbeat keeps a fair waiter's place in the queue while it waits.
type heartbeat = watchdog.Heartbeat

// renewal is one lock held by one holder id, shared by the Held values
// that hold it (an outer hold and its re-entries): the watchdog's state,
// stored in the first holder's heldLock (ownRenewal), and what the
// Locker's side needs to report on it.
type renewal struct {
	state   watchdog.Renewal
	l       *Locker
	spec    *lockSpec       // the first holder's heldLock's, which holds this renewal too
	hold    *hold           // the hold renewed: its holder's calls and its fence
	granted time.Time       // for Event.Held: when the first holder learnt it had the lock
	ctx     context.Context // the first holder's Acquire context, for observers
}

// newWatchdog starts l's watchdog, and has the backend tell it when the
// master serving some keys changed, if it can.
func newWatchdog(l *Locker) *watchdog.Watchdog {
	d := watchdog.New(watchdog.Config{Send: l.backend.EvalBatch, Denied: permissionDenied, Closed: ErrClosed})
	if l.caps.WatchMasters != nil {
		l.caps.WatchMasters(l.prefix, d.Reverify)
	}
	return d
}

// register adds h as a holder of hl's lock, whose lease in Redis lasts
// hl.validFor from a moment no earlier than hl.acquired. A new renewal is
// stored in hl (ownRenewal); another holder of the same hold joins it.
func (l *Locker) register(h *Held, hl *heldLock) (*renewal, error) {
	r := &hl.ownRenewal
	r.l, r.spec, r.hold, r.granted, r.ctx = l, hl.spec, hl.hold, hl.granted, h.parent
	o, err := l.dog.Register(r, watchdog.Lock{
		Key:         watchdog.Key{Lock: hl.spec.base, Mode: uint8(hl.spec.Kind), Holder: hl.hold.key.holder},
		FirstKey:    hl.spec.keys[0],
		Lease:       hl.spec.lease,
		Sent:        hl.acquired,
		ValidFor:    hl.validFor,
		Renew:       hl.hold.call(hl.spec.Kind.scripts().renew),
		Claim:       hl.offerClaim,
		ClaimFailed: hl.claimFailed,
	}, h)
	if err != nil {
		return nil, err
	}
	return o.(*renewal), nil
}

// State is where the watchdog keeps r's scheduling state.
func (r *renewal) State() *watchdog.Renewal { return &r.state }

// Renewed reports a renewal Redis acknowledged to the observers.
func (r *renewal) Renewed() {
	r.l.observe(r.ctx, Event{Kind: EventRenewed, Lock: r.spec.withLease(), Holder: r.hold.key.holder, Fence: r.hold.fence})
}

// Cause words why the watchdog ended r's lock, wrapping ErrLockLost.
func (r *renewal) Cause(reason watchdog.Reason, err error) error {
	switch reason {
	case watchdog.Expired:
		return fmt.Errorf("%w: %s: no renewal acknowledged within its lease", ErrLockLost, r.spec)
	case watchdog.Refused:
		return fmt.Errorf("%w: %s: renewal refused, the lock is no longer held", ErrLockLost, r.spec)
	case watchdog.Denied:
		return fmt.Errorf("%w: %s: renewal denied: %w", ErrLockLost, r.spec, err)
	case watchdog.Closed:
		return fmt.Errorf("%w: %s: %w", ErrLockLost, r.spec, ErrClosed)
	}
	return fmt.Errorf("%w: %s", ErrLockLost, r.spec) // GivenUp
}

// Lost cancels the contexts of every holder of r with cause, and reports
// the loss to the observers.
func (r *renewal) Lost(cause error, holders []any) {
	for _, h := range holders {
		h.(*Held).lost(cause)
	}
	r.l.observe(r.ctx, Event{Kind: EventLost, Lock: r.spec.withLease(), Holder: r.hold.key.holder, Fence: r.hold.fence, Held: time.Since(r.granted), Err: cause})
}
