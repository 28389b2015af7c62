package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// A call whose outcome is unknown (no reply in time, a dropped connection,
// a failed WAIT) may have taken the lock, or registered its holder id as a
// waiter, or be about to, if its command still sits in a buffer on the way.
// So may a release that failed. The caller has returned; nothing may stay
// held in its name. The clean-up gives back whatever that holder id may
// have on the lock, by running the kind's release script for it, which is
// idempotent and also withdraws a waiter's registration (holder ids are
// never reused, so this cannot touch anyone else's hold):
//
//  1. It waits until the call in doubt has returned (go-redis's own
//     timeouts bound that). From then on, the call can no longer be sent
//     again; it can only still be waiting in Redis's input buffers.
//  2. It runs the release until a reply arrives, with backoff.
//  3. If the call in doubt ended without a reply, a command of it may have
//     been read by Redis in the same event-loop pass as that release and
//     run after it, so one more release, sent after the first one's reply,
//     confirms that nothing is left.
//
// It gives up once the lease would have ended anyway, counted from when the
// call in doubt returned. Its end is reported as EventCleanedUp.

// cleanups tracks the clean-ups in flight, so that Close can wait for them.
type cleanups struct {
	wg       sync.WaitGroup
	stopOnce sync.Once
	stop     chan struct{} // closed when Close stops waiting for them
}

func (c *cleanups) init() { c.stop = make(chan struct{}) }

// wait waits for the clean-ups in flight, at most d, and then stops those
// still running and any started later (the backend is closed next, so
// they could not succeed).
func (c *cleanups) wait(d time.Duration) {
	done := make(chan struct{})
	go func() {
		c.wg.Wait()
		close(done)
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
	c.stopOnce.Do(func() { close(c.stop) })
}

// Pacing of the clean-up's release attempts.
const (
	cleanupBackoffMin = 10 * time.Millisecond
	cleanupBackoffMax = time.Second
)

// cleanUp starts the clean-up of holder on spec in the background, once p
// (the call in doubt; finished(nil) if there is none) has returned.
func (l *Locker) cleanUp(spec *lockSpec, holder string, p *pending) {
	l.cleanups.wg.Add(1)
	go func() {
		defer l.cleanups.wg.Done()
		<-p.done
		err := l.giveBack(spec, holder, p.err != nil)
		l.observe(context.Background(), Event{Kind: EventCleanedUp, Lock: spec.withLease(), Holder: holder, Err: err})
	}()
}

// releaseNow runs the release script for holder once, at most bound, and
// reports EventCleanedUp if Redis answered and confirm is not needed. It
// returns nil then, or the call to hand to cleanUp.
func (l *Locker) releaseNow(spec *lockSpec, holder string, bound time.Duration, confirm bool) *pending {
	if confirm {
		return finished(errNoReply)
	}
	call := spec.call(spec.Kind.scripts().release, holder, l.publish)
	now := time.Now()
	_, _, p, err := l.evalBounded(context.Background(), callBounds{now: now, deadline: now.Add(bound), orphan: l.releaseTimeout}, call, false)
	if err != nil {
		return p
	}
	l.observe(context.Background(), Event{Kind: EventCleanedUp, Lock: spec.withLease(), Holder: holder})
	return nil
}

// giveBack runs the release script for holder until it is sure that
// nothing of holder is left (see above), or the lease would have ended.
func (l *Locker) giveBack(spec *lockSpec, holder string, confirm bool) error {
	call := spec.call(spec.Kind.scripts().release, holder, l.publish)
	giveUpAt := time.Now().Add(spec.lease)
	backoff := time.Duration(0)
	var lastErr error
	for replies := 0; ; {
		ctx, cancel := context.WithTimeout(context.Background(), min(l.releaseTimeout, time.Until(giveUpAt)))
		_, err := l.backend.Eval(ctx, call)
		cancel()
		if err == nil {
			replies++
			if replies == 2 || !confirm {
				return nil
			}
			backoff = cleanupBackoffMin
		} else if permissionDenied(err) {
			return fmt.Errorf("lockgen: clean-up of %s for %s: %w", spec, holder, err)
		} else {
			lastErr = err
			backoff = min(max(2*backoff, cleanupBackoffMin), cleanupBackoffMax)
		}
		if !time.Now().Add(backoff).Before(giveUpAt) {
			return fmt.Errorf("lockgen: clean-up of %s for %s: gave up when its lease would have ended: %w", spec, holder, errors.Join(lastErr, ErrNotHeld))
		}
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-l.cleanups.stop:
			t.Stop()
			return fmt.Errorf("lockgen: clean-up of %s for %s: %w", spec, holder, errors.Join(lastErr, ErrClosed))
		}
	}
}
