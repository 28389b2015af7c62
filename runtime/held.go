package runtime

import (
	"context"
	"errors"
	"fmt"
	stdruntime "runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/internal/callqueue"
	"github.com/lockgen/lockgen/internal/protocol"
)

// Held is the set of locks taken by one Acquire call. Give it back with
// Release (or ReleaseInto in a defer) exactly once.
type Held struct {
	l      *Locker
	parent context.Context // the caller's context: values for the release
	ctx    context.Context
	cancel context.CancelCauseFunc
	locks  []*heldLock // canonical order

	// Most Acquire calls take one lock. Its heldLock, the slot of locks
	// that points to it, and the context Context returns are part of the
	// Held, so that such a call allocates them together.
	first     heldLock
	firstRef  [1]*heldLock
	firstSpec [1]lockSpec // where Acquire resolves it
	firstKeys [4]string   // its KEYS (as many as the family with the most has)
	chain     chainCtx

	releaseCtx boundedCtx      // the context of its releases (releaseContext)
	values     context.Context // parent detached from its cancellation, made once (detached)

	released atomic.Bool
	mu       sync.Mutex
	lostErr  error
}

// heldLock is one lock of a Held: its own hold in Redis, or a re-entry of
// a hold of its call chain.
type heldLock struct {
	spec     *lockSpec // in its Acquire's specs (the Held's own for a lone lock)
	hold     *hold
	claimed  *heldLock     // the chain's hold this re-entry claimed (exclusive kinds), if any
	renewal  *renewal      // nil with NoRenew and for re-entries
	acquired time.Time     // the lease origin: a moment before Redis started counting the lease
	granted  time.Time     // when this process learnt it had the lock, for Event.Held
	validFor time.Duration // from acquired: how long Redis keeps it without a renewal
	// offerClaim, if its Script is set, is the call that claims a mutex offer
	// counted held before Redis confirmed it (acquisition.handedOver): the
	// watchdog sends it at once, as the first renewal. claimFailed runs if
	// the hold is lost before a claim succeeded.
	offerClaim  backend.Call
	claimFailed func()

	// reentered is set while a nested Acquire re-enters this hold (for
	// exclusive kinds; see reentry.go).
	reentered atomic.Bool

	// Storage for the hold this lock took in Redis and its renewal, if it
	// took one (a re-entry points to its chain's).
	ownHold    hold
	ownRenewal renewal
	argv       argStorage // the values of the hold's calls
}

// newHeld returns a Held for at most n locks, with storage for them
// (lockAt). Acquire sets its context once the locks are resolved.
func newHeld(l *Locker, parent context.Context, n int) *Held {
	h := &Held{l: l, parent: parent}
	if n == 1 {
		h.locks = h.firstRef[:0]
	} else {
		h.locks = make([]*heldLock, 0, n)
	}
	return h
}

// lockAt returns the storage for the i-th lock of h.
func (h *Held) lockAt(i int) *heldLock {
	if i == 0 {
		return &h.first
	}
	return new(heldLock)
}

// keepAlive has the watchdog renew hl, a lock just taken, or, for a
// renew=false lock, moves expiry to its lease's end if that comes first.
// A re-entry needs neither: its chain's context already carries the
// hold's deadline or loss.
func (h *Held) keepAlive(hl *heldLock, expiry *time.Time) error {
	switch {
	case hl.validFor == 0:
	case hl.spec.NoRenew:
		end := hl.acquired.Add(hl.validFor - protocol.DriftMargin(hl.validFor))
		if expiry.IsZero() || end.Before(*expiry) {
			*expiry = end
		}
	default:
		r, err := h.l.register(h, hl)
		if err != nil {
			return err
		}
		hl.renewal = r
	}
	return nil
}

// endBefore gives the holder's context a deadline at expiry, the end of
// the earliest renew=false lease (if any), so that the method stops before
// Redis may give the lock to another.
func (h *Held) endBefore(expiry time.Time) error {
	if expiry.IsZero() {
		return nil
	}
	if !time.Now().Before(expiry) {
		return fmt.Errorf("%w: the lease of a renew=false lock ran out while waiting for the others", ErrNotAcquired)
	}
	ctx, stop := context.WithDeadlineCause(h.ctx, expiry, fmt.Errorf("%w: renew=false lease about to run out", ErrLockLost))
	inner := h.cancel
	h.ctx, h.cancel = ctx, func(cause error) { inner(cause); stop() }
	return nil
}

// abandon gives back the locks an Acquire that failed with err had taken.
func (h *Held) abandon(err error) error {
	rerr := h.releaseLocks()
	h.cancel(nil)
	return errors.Join(err, rerr)
}

// claim reserves hl for one active re-entry if its kind is exclusive. It
// reports false if another re-entry is active.
func (hl *heldLock) claim() bool {
	if !hl.spec.Kind.exclusive() {
		return true
	}
	return hl.reentered.CompareAndSwap(false, true)
}

func (hl *heldLock) unclaim() {
	if hl.spec.Kind.exclusive() {
		hl.reentered.Store(false)
	}
}

// Context returns the holder's context, to pass to the code that runs under
// the locks. It carries the holder identity (nested Acquire calls with it
// re-enter; Fence reads it). It is cancelled when a lock is lost, with a
// cause that wraps ErrLockLost (context.Cause), with NoRenew when the lease
// is about to run out, when the caller's context is done, and on Release.
// A loss is reported before another client can acquire the lock: the local
// deadline counts from the send time of the last acknowledged renewal,
// less a margin for clock drift.
func (h *Held) Context() context.Context { return h.ctx }

// Release gives every lock back, in the reverse of the order they were
// taken, and returns the errors of all that failed, joined. It runs on a
// context that is not cancelled (bounded by WithReleaseTimeout), so it works
// when the caller's context is done or the method panicked. A lock that had
// expired or been taken over gives an error that wraps ErrNotHeld (and
// ErrLockLost if the watchdog had noticed); a second Release returns
// ErrNotHeld. A nil error means that Redis has confirmed every release. A
// release whose reply did not arrive returns its error and is retried in
// the background (EventCleanedUp); one that could not be sent is tried
// again within the timeout. A release the client resent after a lost
// reply may return ErrNotHeld although it did release.
func (h *Held) Release() error {
	if h == nil {
		return fmt.Errorf("%w: nil *Held", ErrNotHeld)
	}
	if !h.released.CompareAndSwap(false, true) {
		return fmt.Errorf("%w: already released", ErrNotHeld)
	}
	err := h.releaseLocks()
	h.cancel(nil)
	return err
}

// ReleaseInto releases and joins the release error into *errp, for
// generated code: defer held.ReleaseInto(&err).
func (h *Held) ReleaseInto(errp *error) {
	if err := h.Release(); err != nil {
		*errp = errors.Join(*errp, err)
	}
}

// lost records that a lock of h was lost and cancels h's context.
func (h *Held) lost(cause error) {
	h.mu.Lock()
	if h.lostErr == nil {
		h.lostErr = cause
	}
	h.mu.Unlock()
	h.cancel(cause)
}

func (h *Held) releaseLocks() error {
	var errs []error
	for i := len(h.locks) - 1; i >= 0; i-- {
		if err := h.l.releaseOne(h, h.locks[i]); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// releaseOne gives hl back: the hold's last reference runs the release
// script; a re-entry only lets go of its reference.
func (l *Locker) releaseOne(h *Held, hl *heldLock) error {
	var lost error
	inDoubt := false
	var ctx context.Context // of the release, made before the wait for a claim, which it bounds
	var giveUp time.Time
	if hl.renewal != nil {
		// A release that overtook the claim of an offer counted held
		// would leave the claim's next waiter unregistered (and the
		// claim refused): it waits for the claim, a round trip at most
		// unless Redis fails, never past the offer's lease nor half the
		// release's own bound (AwaitClaim).
		ctx, giveUp = l.releaseContext(h)
		l.dog.AwaitClaim(hl.renewal, giveUp)
		lost, inDoubt = l.dog.Unregister(hl.renewal, h)
	}
	if hl.claimed != nil {
		hl.claimed.unclaim()
	}
	if !l.holds.drop(hl.hold) {
		// The chain still holds it; a re-entry reports neither its
		// acquire nor its release, but does not claim a lock lost meanwhile.
		if lost := h.ended(); lost != nil {
			return fmt.Errorf("%w: release %s: %w", ErrNotHeld, hl.spec, lost)
		}
		return nil
	}
	var err error
	if lost != nil {
		err = l.releaseLost(hl, lost, inDoubt)
	} else {
		if ctx == nil {
			ctx, giveUp = l.releaseContext(h)
		}
		err = l.releaseHold(h, hl, ctx, giveUp)
	}
	if l.observed() {
		l.observe(h.parent, Event{Kind: EventReleased, Lock: hl.spec.withLease(), Holder: hl.hold.key.holder, Fence: hl.hold.fence, Held: time.Since(hl.granted), Err: err})
	}
	return err
}

// releaseLost ends hl, whose loss the watchdog has already told its
// holder: at once, without waiting for Redis (which may be the reason it
// was lost). If the loss was in doubt (no renewal acknowledged within the
// lease, so one whose reply was lost may have extended it), the clean-up
// gives the lock back in the background; otherwise Redis said it is not
// held, or refused the renewal, or the Locker is closed, and there is
// nothing to give back.
func (l *Locker) releaseLost(hl *heldLock, lost error, inDoubt bool) error {
	if inDoubt {
		l.cleanUp(hl.spec, hl.hold.key.holder, callqueue.Returned, true)
	}
	return fmt.Errorf("%w: release %s: %w", ErrNotHeld, hl.spec, lost)
}

// ended returns why h's hold ended without a Release, wrapping
// ErrLockLost: the watchdog lost a lock of it, or a renew=false lease ran
// out (its context's deadline), also for a re-entry, whose context ends
// with its chain's. It returns nil while h holds its locks.
func (h *Held) ended() error {
	h.mu.Lock()
	lost := h.lostErr
	h.mu.Unlock()
	if lost != nil {
		return lost
	}
	if h.ctx == nil {
		return nil
	}
	if cause := context.Cause(h.ctx); errors.Is(cause, ErrLockLost) {
		return cause
	}
	return nil
}

// releaseHold runs the release script of hl's hold on ctx, retrying a
// call not sent until giveUp (releaseContext); without a reply it leaves
// the release to the clean-up.
func (l *Locker) releaseHold(h *Held, hl *heldLock, ctx context.Context, giveUp time.Time) error {
	holder := hl.hold.key.holder
	wc, near := l.wakeups.ReleaseStarts(hl.spec.wake, hl.spec.Kind == Mutex)
	call := hl.hold.release
	if near != "" && near != holder {
		call = withArg(call, near)
	}
	sent := time.Now()
	reply, err := l.evalRelease(ctx, giveUp, call)
	grant, ok := protocol.ReleasedBy(reply)
	if err != nil {
		grant = ""
	}
	if l.wakeups.ReleaseEnds(wc, grant, sent) {
		// The lock went to a waiter of this process, which is now ready
		// to run next on this goroutine's P, but only once this goroutine
		// blocks: yield, so that the new holder goes on now rather than
		// after whatever the caller does next (sync.Mutex hands over the
		// same way when it starves). The lock is the contended resource;
		// the releaser is done with it. Measured in docs/redis-cost.md.
		stdruntime.Gosched()
	}
	if permissionDenied(err) || refusedOutright(err) {
		return fmt.Errorf("lockgen: release %s: %w (the lock stays until its lease ends)", hl.spec, err)
	}
	if err != nil {
		l.cleanUp(hl.spec, holder, callqueue.Finished(err), true)
		return fmt.Errorf("lockgen: release %s: %w (retrying in the background)", hl.spec, err)
	}
	switch {
	case ok:
		return nil
	case reply != int64(0):
		return fmt.Errorf("lockgen: release %s: unexpected reply %#v", hl.spec, reply)
	}
	h.mu.Lock()
	lost := h.lostErr
	h.mu.Unlock()
	if lost != nil {
		return fmt.Errorf("%w: release %s: %w", ErrNotHeld, hl.spec, lost)
	}
	return fmt.Errorf("%w: release %s: expired or taken over", ErrNotHeld, hl.spec)
}

// releaseContext returns the context of a release of h: the values of
// the Acquire call's context, not its cancellation, and a deadline within
// the release timeout; and when the release's retries must give up (that
// deadline). The deadline is left out when the backend's own timeouts end
// every call sooner, and is otherwise the Locker's shared one (bound.go),
// which costs neither a context nor a timer per release, nor a reading of
// the clock.
func (l *Locker) releaseContext(h *Held) (context.Context, time.Time) {
	if l.caps.CallBound > 0 && l.caps.CallBound <= l.releaseTimeout {
		return h.detached(), time.Now().Add(l.releaseTimeout)
	}
	dl := l.releaseBound.Current()
	return h.releaseCtx.Bind(h.detached(), dl), dl.At
}

// detached returns the values of the Acquire call's context without its
// cancellation, for the calls that outlive it: an acquire's call left
// running, the releases. It is made once per Held, by Acquire and then by
// Release, which never run at the same time.
func (h *Held) detached() context.Context {
	if h.values == nil {
		h.values = callqueue.Detach(h.parent)
	}
	return h.values
}
