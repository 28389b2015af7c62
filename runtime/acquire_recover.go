package runtime

import (
	"fmt"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/internal/callerr"
)

// An acquisition whose call fails transiently (a failover, a dropped
// connection) does not fail: it gives its holder id to the clean-up, takes
// a new one and tries again after a pause, until the wait or the
// unreachable timeout ends. This file holds that recovery; acquire.go the
// loop that calls it.

// Pacing of a waiter's attempts after transient errors (transient.go):
// quick at first, since a failover on loopback takes a few hundred ms once
// decided, and never so slow that a lock released after the failover waits
// long for its waiter.
const (
	transientBackoffMin = 20 * time.Millisecond
	transientBackoffMax = 250 * time.Millisecond
)

// defaultUnreachableTimeout is WithUnreachableTimeout's default: several
// times the 2-3 s a Sentinel or Cluster failover took in the failover
// tests, and short enough that a caller without a deadline learns of a
// Redis that is gone.
const defaultUnreachableTimeout = 15 * time.Second

// mayRecover reports whether an attempt that failed with err is tried
// again: a transient error, a caller that waits, time left to wait, and a
// holder id the acquisition may replace (see recoverFrom).
//
// sent is when the failed attempt was sent: the first failure after the
// latest reply starts the unreachable timeout, and once that has passed
// the acquisition gives up (a.unreachable) however long it may still wait.
func (a *acquisition) mayRecover(err error, sent time.Time) bool {
	if a.tryOnce || a.fixedHolder || !callerr.IsTransient(err) || a.wctx.Err() != nil || a.l.isClosed() {
		return false
	}
	if a.failingSince.IsZero() {
		a.failingSince = sent
	}
	now := time.Now()
	if !now.Before(a.failingSince.Add(a.l.unreachableTimeout)) {
		a.unreachable = true
		return false
	}
	return a.deadline.IsZero() || now.Before(a.deadline)
}

// failingUntil is when the unreachable timeout of the current run of
// failures ends (zero: the latest attempt got a reply).
func (a *acquisition) failingUntil() time.Time {
	if a.failingSince.IsZero() {
		return time.Time{}
	}
	return a.failingSince.Add(a.l.unreachableTimeout)
}

// unreachableError is the error of an acquisition that gave up after its
// unreachable timeout: it wraps err, the last failure.
func (a *acquisition) unreachableError(err error) error {
	return fmt.Errorf("lockgen: acquire %s: Redis failed every attempt for %v (unreachable timeout %v, %d attempts): %w",
		a.spec, time.Since(a.failingSince).Round(time.Millisecond), a.l.unreachableTimeout, a.transientErrors+1, err)
}

// waitError is waitError for this acquisition: when the wait ends during a
// run of failures, the error names the last one as well (errors.Is finds
// both), since "context deadline exceeded" alone would hide that Redis was
// never reached.
// callErr, if not nil, is the error of the call during which the wait
// ended, the latest failure if it is transient.
func (a *acquisition) waitError(callErr error) error {
	err := waitError(a.wctx, a.ctx, a.spec)
	last, failures := a.lastTransient, a.transientErrors
	if callerr.IsTransient(callErr) {
		last, failures = callErr, failures+1
	}
	if err == nil || last == nil {
		return err
	}
	return fmt.Errorf("%w (Redis failing meanwhile, %d failed attempts, the last: %w)", err, failures, last)
}

// recoverFrom makes ready for another attempt after a transient error of
// the call p. That call may have taken the lock or registered the holder
// id, and without a reply, its command may still reach Redis later (from a
// client buffer, a proxy, a retry); so may the releases sent to undo it.
// So the holder id is given up to the clean-up (cleanup_link.go), exactly as by
// a waiter that gave up, and the wait goes on under a new holder id, which
// nothing in flight can take or give back. Then it pauses, with backoff.
func (a *acquisition) recoverFrom(cause error, p *pending) error {
	a.transientErrors++
	a.lastTransient = cause
	a.l.observe(a.ctx, Event{Kind: EventRetried, Lock: a.spec.withLease(), Holder: a.holder, Waited: time.Since(a.start), Err: cause})
	a.withdraw(p)
	if err := a.renewHolder(); err != nil {
		return err
	}
	return a.pause()
}

// renewHolder moves the acquisition to a new holder id: its place among the
// process's waiters stays, its registrations in Redis (withdrawn by the
// clean-up of the old id) and its fair heartbeat go.
func (a *acquisition) renewHolder() error {
	holder := a.l.nextHolder()
	if err := checkHolderID(holder); err != nil {
		return err
	}
	if a.w != nil {
		a.l.wakeups.Rename(a.w, holder)
	}
	if a.hb != nil {
		a.l.dog.RemoveHeartbeat(a.hb)
		a.hb = nil
	}
	a.holder, a.registered, a.regSent, a.firstSent, a.cleaning = holder, false, time.Time{}, time.Time{}, false
	// The next attempt makes its call for the new id, in storage of its
	// own: the call in doubt may still be read by its goroutine.
	a.call, a.argv = backend.Call{}, new(argStorage)
	return nil
}

// pause sleeps the backoff (doubling it for the next time, up to
// transientBackoffMax), or less if a wake message arrives or the wait
// ends; it fails if the caller's context ends or the Locker is closed.
func (a *acquisition) pause() error {
	d := max(a.backoff, transientBackoffMin)
	a.backoff = min(2*d, transientBackoffMax)
	for _, end := range [...]time.Time{a.deadline, a.failingUntil()} {
		if !end.IsZero() {
			d = min(d, max(time.Until(end), time.Nanosecond))
		}
	}
	var wake <-chan struct{}
	if a.w != nil {
		wake = a.w.Wake()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-wake:
	case <-a.wctx.Done():
		return a.waitError(nil)
	case <-a.l.closed:
		return fmt.Errorf("%s: %w", a.spec, ErrClosed)
	}
	return nil
}
