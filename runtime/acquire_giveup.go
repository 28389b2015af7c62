package runtime

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lockgen/lockgen/internal/callqueue"
)

// How an acquisition ends without the lock: how long its calls may run
// (callDeadline, grace), the error it returns (callError, waitError), and
// the give-back of whatever its calls or busy replies may have taken or
// registered in Redis (giveUp, withdraw), so that nothing stays held in
// the name of a caller that has returned.

// giveUp ends a failed acquisition: whatever its busy replies registered in
// Redis is withdrawn.
func (a *acquisition) giveUp(err error) error {
	if a.registered {
		a.withdraw(callqueue.Finished(nil))
	}
	a.l.observe(a.ctx, Event{Kind: EventGaveUp, Lock: a.spec.withLease(), Holder: a.holder, Waited: time.Since(a.start), Err: err})
	return err
}

// withdraw gives back whatever a.holder may have taken or registered, once
// p (the last call) has returned: at once if p has and Redis answers within
// the grace, else in the background (cleanup_link.go).
func (a *acquisition) withdraw(p *pending) {
	if a.cleaning {
		return
	}
	a.cleaning = true
	mayHold := a.registered
	select {
	case <-p.Done:
		if !mayHold && p.Err != nil && didNotRun(p.Err) {
			return // never sent, or refused: nothing of a.holder in Redis
		}
		mayHold = true
		p = a.l.releaseNow(a.spec, a.holder, a.grace(), p.Err != nil)
		if p == nil {
			return
		}
	default:
	}
	a.l.cleanUp(a.spec, a.holder, p, mayHold)
}

// callError says why a call got no usable reply. A waiter that was told
// busy before, and whose last attempt got no reply before its wait ended,
// was busy for the whole wait as far as it knows: ErrNotAcquired.
func (a *acquisition) callError(err error) error {
	if werr := a.waitError(err); werr != nil {
		return werr
	}
	if a.unreachable {
		return a.unreachableError(err)
	}
	if errors.Is(err, errNoReply) {
		if end := a.failingUntil(); a.lastTransient != nil && !end.IsZero() && !time.Now().Before(end) {
			return a.unreachableError(a.lastTransient)
		}
		if a.lastTransient != nil {
			// The wait ran out while Redis was failing: say how.
			return fmt.Errorf("%w (still failing when the wait ended, after %d transient errors)", a.lastTransient, a.transientErrors)
		}
		if a.busyReplies > 0 {
			return a.heldBy.explain(fmt.Errorf("%w: %s still busy after %v (the last attempt got no reply in time)", ErrNotAcquired, a.spec, time.Since(a.start).Round(time.Millisecond)))
		}
		return fmt.Errorf("lockgen: acquire %s: no reply from Redis within the wait: %w", a.spec, context.DeadlineExceeded)
	}
	return fmt.Errorf("lockgen: acquire %s: %w", a.spec, err)
}

// waitError says why wctx is done: the caller's context (its error, and its
// cause if that is different), or the loss of a lock already taken by the
// same call. It returns nil if wctx is not done.
func waitError(wctx, ctx context.Context, spec *lockSpec) error {
	if wctx.Err() == nil {
		return nil
	}
	if err := ctx.Err(); err != nil {
		if cause := context.Cause(ctx); cause != nil && cause != err {
			return fmt.Errorf("lockgen: waiting for %s: %w (%w)", spec, err, cause)
		}
		return fmt.Errorf("lockgen: waiting for %s: %w", spec, err)
	}
	return fmt.Errorf("lockgen: waiting for %s: %w", spec, context.Cause(wctx))
}

// callDeadline bounds each call made while waiting: the end of the wait,
// plus a little grace for the attempt that falls due at its very end.
//
// During a run of failures, a call ends at the unreachable timeout as well:
// one that hangs (a dial to a host that is gone) must not keep the caller
// past it.
func (a *acquisition) callDeadline() time.Time {
	end := a.deadline
	if until := a.failingUntil(); !until.IsZero() && (end.IsZero() || until.Before(end)) {
		end = until
	}
	if end.IsZero() {
		return end
	}
	return end.Add(a.grace())
}

// grace is how long a call may run past the end of a wait (the last
// attempt), and how long a caller that gives up waits for its withdrawal
// before leaving it to the background: a tenth of the wait, within
// 10..250 ms.
func (a *acquisition) grace() time.Duration {
	wait := a.deadline.Sub(a.start)
	if a.deadline.IsZero() {
		return maxGrace
	}
	return min(max(wait/10, 10*time.Millisecond), maxGrace)
}

const maxGrace = 250 * time.Millisecond
