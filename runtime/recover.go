package runtime

import (
	"errors"
	"fmt"
	"time"
)

// Pacing of a waiter's attempts after transient errors (transient.go):
// quick at first, since a failover on loopback takes a few hundred ms once
// decided, and never so slow that a lock released after the failover waits
// long for its waiter.
const (
	transientBackoffMin = 20 * time.Millisecond
	transientBackoffMax = 250 * time.Millisecond
)

// mayRecover reports whether an attempt that failed with err is tried
// again: a transient error, a caller that waits, and time left to wait.
func (a *acquisition) mayRecover(err error) bool {
	if a.tryOnce || !isTransient(err) || a.wctx.Err() != nil || a.l.isClosed() {
		return false
	}
	return a.deadline.IsZero() || time.Now().Before(a.deadline)
}

// recoverFrom makes ready for another attempt after a transient error of
// the call p. That call may have taken the lock or registered the holder
// id (a WAIT that failed after the script ran, a reply lost with the
// connection), so the holder's release runs first, as the clean-up does
// (cleanup.go), but within the wait: the holder id then holds nothing and
// can try again. If the wait ends first, the rest is left to the
// background clean-up and the wait fails with cause.
func (a *acquisition) recoverFrom(cause error, p *pending) error {
	a.transientErrors++
	a.l.observe(Event{Kind: EventRetried, Lock: a.spec.withLease(), Holder: a.holder, Waited: time.Since(a.start), Err: cause})
	call := a.spec.call(a.spec.Kind.scripts().release, a.holder, a.l.publish)
	backoff := transientBackoffMin
	// A call without a reply needs a second release after the first
	// one's reply (cleanup.go, step 3).
	for replies := 0; replies < 2; {
		select {
		case <-p.done:
		default:
			a.withdraw(p)
			return a.recoveryFailed(cause)
		}
		_, _, rp, err := a.l.evalBounded(a.wctx, a.callDeadline(), a.l.releaseTimeout, call, false)
		if err == nil {
			replies++
			continue
		}
		p = rp
		if !a.mayRecover(err) {
			a.withdraw(p)
			return a.recoveryFailed(errors.Join(cause, err))
		}
		if err := a.pause(&backoff); err != nil {
			a.withdraw(p)
			return err
		}
	}
	a.registered = false
	return a.pause(&backoff)
}

// pause sleeps *backoff (doubling it for the next time, up to
// transientBackoffMax), or less if a wake message arrives or the wait
// ends; it fails if the caller's context ends or the Locker is closed.
func (a *acquisition) pause(backoff *time.Duration) error {
	d := *backoff
	*backoff = min(2*d, transientBackoffMax)
	if !a.deadline.IsZero() {
		d = min(d, max(time.Until(a.deadline), time.Nanosecond))
	}
	var wake <-chan struct{}
	if a.w != nil {
		wake = a.w.wake
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-wake:
	case <-a.wctx.Done():
		return waitError(a.wctx, a.ctx, a.spec)
	case <-a.l.closed:
		return fmt.Errorf("%s: %w", a.spec, ErrClosed)
	}
	return nil
}

// recoveryFailed says why a wait ended while Redis was failing
// transiently: the caller's context, or else the wait's end with the
// last error Redis gave.
func (a *acquisition) recoveryFailed(cause error) error {
	if werr := waitError(a.wctx, a.ctx, a.spec); werr != nil {
		return werr
	}
	return fmt.Errorf("lockgen: acquire %s: Redis still failing when the wait ended after %v (%d transient errors): %w", a.spec, time.Since(a.start).Round(time.Millisecond), a.transientErrors, cause)
}
