package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Held is the set of locks taken by one Acquire call. Give it back with
// Release (or ReleaseInto in a defer) exactly once.
type Held struct {
	l      *Locker
	parent context.Context // the caller's context: values for the release
	ctx    context.Context
	cancel context.CancelCauseFunc
	locks  []*heldLock // canonical order

	released atomic.Bool
	mu       sync.Mutex
	lostErr  error
}

// heldLock is one lock of a Held.
type heldLock struct {
	spec     lockSpec
	holder   string
	fence    int64
	acquired time.Time
	renewal  *renewal  // nil with NoRenew
	outer    *heldLock // the hold this one re-enters and has claimed, if any

	// reentered is set while a nested Acquire re-enters this hold (for
	// exclusive kinds; see reentry.go).
	reentered atomic.Bool
}

// Context returns the holder's context, to pass to the code that runs under
// the locks. It carries the holder identity (nested Acquire calls with it
// re-enter; Fence reads it). It is cancelled when a lock is lost, with a
// cause that wraps ErrLockLost (context.Cause), with NoRenew when the lease
// is about to run out, when the caller's context is done, and on Release.
func (h *Held) Context() context.Context { return h.ctx }

// Release gives every lock back, in the reverse of the order they were
// taken, and returns the errors of all that failed, joined. It runs on a
// context that is not cancelled (bounded by WithReleaseTimeout), so it works
// when the caller's context is done or the method panicked. A lock that had
// expired or been taken over gives an error that wraps ErrNotHeld (and
// ErrLockLost if the watchdog had noticed); a second Release returns
// ErrNotHeld.
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

// releaseOne stops renewing hl and runs its release script.
func (l *Locker) releaseOne(h *Held, hl *heldLock) error {
	if hl.renewal != nil {
		l.dog.unregister(h, hl.renewal)
	}
	if hl.outer != nil {
		hl.outer.unclaim()
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(h.parent), l.releaseTimeout)
	defer cancel()
	call := Call{Script: hl.spec.Kind.scripts().release, Keys: hl.spec.keys, Args: hl.spec.args(hl.holder, l.publish, false)}
	reply, err := l.backend.Eval(ctx, call)
	if err == nil {
		switch n, ok := reply.(int64); {
		case !ok:
			err = fmt.Errorf("lockgen: release %s: unexpected reply %#v", &hl.spec, reply)
		case n < 0:
			h.mu.Lock()
			lost := h.lostErr
			h.mu.Unlock()
			if lost != nil {
				err = fmt.Errorf("%w: release %s: %w", ErrNotHeld, &hl.spec, lost)
			} else {
				err = fmt.Errorf("%w: release %s: expired or taken over", ErrNotHeld, &hl.spec)
			}
		}
	} else {
		err = fmt.Errorf("lockgen: release %s: %w", &hl.spec, err)
	}
	l.observe(Event{Kind: EventReleased, Lock: hl.spec.withLease(), Holder: hl.holder, Fence: hl.fence, Held: time.Since(hl.acquired), Err: err})
	return err
}

// withLease returns the Lock with its effective lease filled in, for events.
func (s *lockSpec) withLease() Lock {
	l := s.Lock
	l.Lease = s.lease
	return l
}
