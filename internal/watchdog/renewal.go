package watchdog

import (
	"context"
	"slices"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/internal/callbound"
	"github.com/lockgen/lockgen/internal/protocol"
)

// Key joins the holders of one hold: Register with a Key already renewed
// adds a holder to it instead of a second renewal. Lock and Mode are the
// owner's (the runtime's: the lock's base key and its kind).
type Key struct {
	Lock   string
	Mode   uint8
	Holder string
}

// Reason says why the watchdog ended a lock; the Owner words it (Cause).
type Reason uint8

const (
	// Expired: the local deadline passed without an acknowledged renewal.
	// A renewal whose reply did not arrive may have kept it in Redis.
	Expired Reason = iota
	// Refused: the renew script said the lock is no longer held.
	Refused
	// Denied: Config.Denied named the renewal's error.
	Denied
	// Closed: Stop ended it; it was not lost in Redis.
	Closed
	// GivenUp: Unregister found it given up before its Owner was told
	// (Expired, Refused or Denied, its Lost still to run).
	GivenUp
)

// Owner is the owner's side of one renewed lock.
type Owner interface {
	// State is where the watchdog keeps the lock's state: storage of the
	// owner's, so that a lock costs the watchdog no allocation.
	State() *Renewal
	// Renewed is told that a renewal was acknowledged.
	Renewed()
	// Cause words why the lock ended; err is the denial, for Denied.
	Cause(reason Reason, err error) error
	// Lost is told that the lock ended with cause (Cause's), with the
	// holders registered then. It runs once, outside the watchdog's mutex.
	Lost(cause error, holders []any)
}

// Lock is what Register needs to know of a lock to renew.
type Lock struct {
	Key Key
	// FirstKey is its first Redis key: the one Reverify's predicate is
	// asked about.
	FirstKey string
	Lease    time.Duration
	// Its lease in Redis lasts ValidFor from a moment no earlier than Sent
	// (a call sent then; for a lock handed over, what is left of the
	// waiter's registration).
	Sent     time.Time
	ValidFor time.Duration
	// Renew is the call that renews it.
	Renew backend.Call
	// Claim, if its Script is set, is sent at once in place of the renewal
	// until one succeeds: the claim of an offer counted held before Redis
	// confirmed it. ClaimFailed runs if the lock is lost, or the claim
	// abandoned (AwaitClaim), before that.
	Claim       backend.Call
	ClaimFailed func()
}

// Renewal is the watchdog's state of one lock held by one holder id,
// shared by the holders registered under its Key.
type Renewal struct {
	key      Key
	firstKey string
	lease    time.Duration
	renew    backend.Call
	owner    Owner
	due      time.Time // next renewal
	deadline time.Time // local deadline (package doc)
	sending  bool
	failures int // failed attempts since the last success
	// recheck: the master serving the lock changed while a renewal was in
	// flight, which may have reached the old one: renew again at once.
	recheck bool
	// holders of the lock: almost always one, stored in firstHolder.
	holders     []any
	firstHolder [1]any
	denied      error // the denial that ended it
	// lostCause is why it ended, once lose has run; inDoubt says that it
	// ran out without an acknowledged renewal, so that a renewal whose
	// reply did not arrive may still have extended it in Redis.
	lostCause error
	inDoubt   bool
	closed    bool // given up by Stop, not lost: the owner still gives it back
	// claim, until a renewal succeeds, is the call sent in place of the
	// renewal (Lock.Claim). claimFailed runs if r is lost before that.
	claim       backend.Call
	claimFailed func()
	claimDone   chan struct{} // closed when the claim succeeded or r was lost
}

// renewCall is the call that renews r's lock: its claim, while it has one
// to make.
func (r *Renewal) renewCall() backend.Call {
	if r.claim.Script != nil {
		return r.claim
	}
	return r.renew
}

// Register adds holder as a holder of lk. A new renewal keeps its state in
// o.State() and is returned as o; a holder of a Key already renewed joins
// that renewal, whose Owner is returned. After Stop it returns
// Config.Closed.
func (d *Watchdog) Register(o Owner, lk Lock, holder any) (Owner, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopped {
		return nil, d.cfg.Closed
	}
	r := d.renewals[lk.Key]
	if r == nil {
		r = o.State()
		*r = Renewal{
			key:      lk.Key,
			firstKey: lk.FirstKey,
			lease:    lk.Lease,
			renew:    lk.Renew,
			owner:    o,
			due:      lk.Sent.Add(lk.ValidFor / 3),
			deadline: lk.Sent.Add(lk.ValidFor - protocol.DriftMargin(lk.ValidFor)),
		}
		if lk.Sent.Before(d.checkedAt) {
			r.due = time.Now() // its acquire was in flight during a check of every lock
		}
		if lk.Claim.Script != nil {
			r.claim, r.claimFailed, r.due = lk.Claim, lk.ClaimFailed, lk.Sent // claimed at once
			r.claimDone = make(chan struct{})
		}
		r.holders = r.firstHolder[:0]
		d.renewals[lk.Key] = r
		d.wakeBefore(callbound.Earliest(r.due, r.deadline))
	}
	r.holders = append(r.holders, holder)
	return r.owner, nil
}

// AwaitClaim waits until the claim of o's lock, if one is pending, has
// succeeded or the lock was lost (the watchdog gives it up at its
// deadline, the end of the offer's lease, at the latest), the watchdog is
// stopped, or halfway to giveUp, the deadline of the release that waits:
// the release call keeps the other half, so that it stays within its
// bound however long the claim's reply takes. A claim not settled by then
// is abandoned (abandonClaim).
func (d *Watchdog) AwaitClaim(o Owner, giveUp time.Time) {
	r := o.State()
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
func (d *Watchdog) abandonClaim(r *Renewal) {
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
func (r *Renewal) dropClaim() (claimFailed func()) {
	claimFailed, r.claimFailed = r.claimFailed, nil
	if r.claim.Script != nil {
		r.claim = backend.Call{}
		close(r.claimDone)
	}
	return claimFailed
}

// Unregister removes holder from o's lock; the last holder to go stops the
// renewals. If the watchdog had already given the lock up (Expired,
// Refused, Denied; not Closed), it returns why (the cause Lost was given,
// or Cause(GivenUp) if Lost has not run yet), and whether a renewal in
// doubt may have kept the lock in Redis.
func (d *Watchdog) Unregister(o Owner, holder any) (lost error, inDoubt bool) {
	r := o.State()
	d.mu.Lock()
	if i := slices.Index(r.holders, holder); i >= 0 {
		r.holders = slices.Delete(r.holders, i, i+1)
	}
	if d.renewals[r.key] != r && !r.closed {
		lost, inDoubt = r.lostCause, r.inDoubt
		d.mu.Unlock()
		if lost == nil { // given up, and lose not run yet
			lost = r.owner.Cause(GivenUp, nil)
		}
		return lost, inDoubt
	}
	if len(r.holders) == 0 && d.renewals[r.key] == r {
		delete(d.renewals, r.key)
	}
	d.mu.Unlock()
	return nil, false
}

// RenewNow renews every registered lock at once, instead of at its next
// due time, and returns once the replies are applied (its Owners told).
// Locks already being renewed are left to that call. It returns
// Config.Closed after Stop, else ctx's error.
func (d *Watchdog) RenewNow(ctx context.Context) error {
	d.mu.Lock()
	if d.stopped {
		d.mu.Unlock()
		return d.cfg.Closed
	}
	d.checkedAt = time.Now()
	b := &batch{}
	for _, r := range d.renewals {
		if !r.sending {
			r.sending = true
			b.rs = append(b.rs, r)
			b.calls = append(b.calls, r.renewCall())
		}
	}
	// Counted in flight like the watchdog's own batches, because apply
	// counts it out.
	d.inflight++
	d.mu.Unlock()

	sent := time.Now()
	var replies []backend.Reply
	if len(b.calls) > 0 {
		replies = d.cfg.Send(ctx, b.calls)
	}
	d.apply(b, sent, allReplies(replies, len(b.calls)))
	// The run loop may have waited for room in flight: let it look again.
	d.mu.Lock()
	d.wakeBefore(time.Now())
	d.mu.Unlock()
	return ctx.Err()
}
