package runtime

import (
	"context"
	"fmt"
	"time"

	"github.com/lockgen/lockgen/internal/callqueue"
	"github.com/lockgen/lockgen/internal/cleanup"
)

// A call whose outcome is unknown (no reply in time, a dropped connection,
// a failed WAIT) may have taken the lock, or registered its holder id as a
// waiter; so may a release that failed. The caller has returned, and
// nothing may stay held in its name: the Locker hands such a holder id to
// its clean-up queue (internal/cleanup), which runs the kind's release
// script for it in the background (idempotent, and it also withdraws a
// waiter's registration) once the call in doubt has returned, bounded by
// the lease, batched, and paced while Redis cannot be reached. Its end is
// reported as EventCleanedUp. This file links the queue to the Locker.

// cleanups is the Locker's queue of clean-ups.
type cleanups = cleanup.Queue

func (l *Locker) initCleanups() {
	l.cleanups.Init(cleanup.Config{
		Backend: l.backend,
		Timeout: l.releaseTimeout,
		HeldLocally: func(k cleanup.Key) bool {
			return l.holds.has(holdKey{k.Lock, Kind(k.Mode), k.Holder})
		},
		Denied: permissionDenied,
		GaveUp: ErrNotHeld,
	})
}

// cleanupKey names the clean-up of holder on the lock of base and kind.
func cleanupKey(base string, kind Kind, holder string) cleanup.Key {
	return cleanup.Key{Lock: base, Mode: uint8(kind), Holder: holder}
}

// didNotRun reports whether err says a call certainly did not run: it was
// never sent, or Redis refused the command as a whole.
func didNotRun(err error) bool { return cleanup.DidNotRun(err) }

// refusedOutright reports whether Redis refused the command as a whole
// (NOAUTH, WRONGPASS, a NOPERM on the command itself).
func refusedOutright(err error) bool { return cleanup.RefusedOutright(err) }

// cleanUp queues the clean-up of holder on spec, once p (the call in
// doubt; returned if there is none) has returned. mayHold says that holder
// may have something in Redis whatever p did (a busy reply registered it,
// or it holds the lock); otherwise it depends on p.
func (l *Locker) cleanUp(spec *lockSpec, holder string, p *pending, mayHold bool) {
	l.cleanups.Add(cleanup.Request{
		Key:     cleanupKey(spec.base, spec.Kind, holder),
		Release: spec.call(spec.Kind.scripts().release, holder, l.publish),
		Lease:   spec.lease,
		Ended:   func(err error) { l.cleanedUp(spec, holder, err) },
	}, p, mayHold)
}

// releaseNow runs the release script for holder once, at most bound, and
// reports EventCleanedUp if Redis answered and confirm is not needed. It
// returns nil then, or the call to hand to cleanUp.
func (l *Locker) releaseNow(spec *lockSpec, holder string, bound time.Duration, confirm bool) *pending {
	if confirm {
		return callqueue.Finished(errNoReply)
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

// cleanedUp reports the end of the clean-up of holder on spec.
func (l *Locker) cleanedUp(spec *lockSpec, holder string, err error) {
	if err != nil {
		err = fmt.Errorf("lockgen: clean-up of %s for %s: %w", spec, holder, err)
	}
	l.observe(context.Background(), Event{Kind: EventCleanedUp, Lock: spec.withLease(), Holder: holder, Err: err})
}
