package runtime

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Acquire takes every lock, all or nothing. It sorts them into the canonical
// order (by base key, then kind; the write side of a key before its read
// side), so that two calls can never deadlock on each other, and takes them
// one after the other. If one cannot be had, those already taken are given
// back and the error says why:
//
//   - busy for the whole wait: an error wrapping ErrNotAcquired and naming
//     the lock. The wait is the shortest Wait of the locks: 0 waits until
//     ctx is done, a duration bounds the whole call, NoWait tries once.
//   - ctx done while waiting: an error wrapping ctx.Err() (and its cause if
//     it has another one), NOT ErrNotAcquired, so that onbusy=skip never
//     hides a cancellation.
//   - a Redis error: wrapped with the lock it concerned.
//   - a malformed Lock: ErrInvalidLock or ErrInvalidKey, before any Redis call.
//
// On success the locks are renewed by the watchdog (unless NoRenew) until
// Release. If ctx holds locks itself (it is or derives from a Held's
// Context), a lock it already holds is re-entered instead (see Held.Context
// and the package documentation).
func (l *Locker) Acquire(ctx context.Context, locks ...Lock) (*Held, error) {
	if l.optErr != nil {
		return nil, l.optErr
	}
	if l.isClosed() {
		return nil, ErrClosed
	}
	specs, err := l.resolveAll(locks)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	wait := specs[0].Wait
	for _, s := range specs[1:] {
		wait = shorterWait(wait, s.Wait)
	}
	var deadline time.Time
	if wait > 0 {
		deadline = start.Add(wait)
	}
	chain := chainOf(ctx)
	holder := l.nextHolder()
	if err := checkHolderID(holder); err != nil {
		return nil, err
	}

	hctx, cancel := context.WithCancelCause(ctx)
	h := &Held{l: l, parent: ctx, ctx: hctx, cancel: cancel, locks: make([]*heldLock, 0, len(specs))}
	var expiry time.Time // earliest NoRenew lease end
	fail := func(err error) (*Held, error) {
		rerr := h.releaseLocks()
		cancel(nil)
		return nil, errors.Join(err, rerr)
	}
	for i := range specs {
		spec := &specs[i]
		hl := &heldLock{spec: *spec, holder: holder}
		outer, claimed, err := chain.reentry(spec)
		if err != nil {
			return fail(err)
		}
		switch {
		case outer != nil && claimed:
			hl.holder = outer.holder // nested inside the re-entry that claimed it
		case outer != nil && outer.claim():
			hl.holder, hl.outer = outer.holder, outer
		}
		sent, err := l.acquireOne(hctx, ctx, hl, start, deadline, wait < 0, hl.holder != holder)
		if err != nil {
			if hl.outer != nil {
				hl.outer.unclaim()
			}
			return fail(err)
		}
		h.locks = append(h.locks, hl)
		if spec.NoRenew {
			end := sent.Add(spec.lease - driftMargin(spec.lease))
			if expiry.IsZero() || end.Before(expiry) {
				expiry = end
			}
		} else if hl.renewal, err = l.dog.register(h, *spec, hl.holder, hl.fence, sent); err != nil {
			return fail(err)
		}
	}
	if !expiry.IsZero() {
		if !time.Now().Before(expiry) {
			return fail(fmt.Errorf("%w: the lease of a renew=false lock ran out while waiting for the others", ErrNotAcquired))
		}
		var stop context.CancelFunc
		hctx, stop = context.WithDeadlineCause(hctx, expiry, fmt.Errorf("%w: renew=false lease about to run out", ErrLockLost))
		inner := cancel
		cancel = func(cause error) { inner(cause); stop() }
		h.cancel = cancel
	}
	h.ctx = context.WithValue(hctx, chainKey{}, &chainLink{held: h, parent: chain})
	return h, nil
}

// acquireOne takes one lock for hl.holder, waiting as the call allows, and
// fills in hl's fence. It returns when the successful acquire was sent,
// from which the lease is counted. wctx is the context to wait on (the
// Held's, so that a lock of the same call lost meanwhile stops the wait);
// ctx is the caller's. reentry says that hl re-enters a hold of the
// caller's chain, which the script grants at once.
//
// Waiting does not poll: a waiter sleeps until a wake message, the retry
// time the script returned, the end of the wait, or ctx. An uncontended
// acquire is one round trip. These keep the number of attempts per
// grant down:
//
//   - If the Locker is already subscribed to the lock's wake channel (other
//     waiters, or a lingering subscription), the waiter joins it before its
//     first attempt, so no wake can be lost and a busy reply is followed by
//     sleep. Otherwise it subscribes after its first busy reply and tries
//     again at once, to cover a wake published in between.
//   - A mutex acquire that finds parked waiters of this process on the
//     channel does not try at all: it queues behind them and sleeps until
//     woken (wakeups deliver "n:1" to the longest waiting first), or until
//     the earliest retry time those waiters were given. So a releaser that
//     asks again at once does not barge in ahead of its own process's
//     waiters. Fair locks are first come first served by their script.
//   - A fair release hands the lock to the head of the queue, a mutex
//     release to its heir (the caller whose busy reply was {2, wait}), and
//     names it in the wake message ("grant:<fence>:<holder>"): the waiter
//     returns without an attempt, its lease counted from its last request
//     that registered it (docs/design.md, hand-over). A grant on a mutex
//     channel also wakes one parked waiter per process, whose attempt makes
//     it the heir of the new grant.
//   - A mutex attempt that will not be followed by a wait (NoWait) says so
//     (ARGV[4] "once") and marks nothing.
//   - Only an attempt that follows a wake-up or a retry timer is a waiter's
//     (mutex_acquire ARGV[4] "waited", which the script lets take a lock
//     reserved for a woken waiter and which keeps the grant marked
//     contended). A mutex won without it leaves the lock unmarked, so the
//     winner nudges the next parked waiter of the process, whose attempt
//     marks it (wakeups.leave).
func (l *Locker) acquireOne(wctx, ctx context.Context, hl *heldLock, start, deadline time.Time, tryOnce, reentry bool) (time.Time, error) {
	spec := &hl.spec
	firstArgs := spec.args(hl.holder, l.publish, spec.Kind == Semaphore)
	// After a busy reply, an exclusive lock's attempts say so (ARGV[4]): a
	// lock they find their own was handed to them, and they claim it
	// instead of re-entering. A mutex tells an attempt right after
	// subscribing ("retry") from one after a wake-up or a retry timer
	// ("waited"), which may take a lock reserved for the woken waiters.
	retryArgs, waitedArgs := firstArgs, firstArgs
	switch spec.Kind {
	case Fair:
		waitedArgs = append(firstArgs[:len(firstArgs):len(firstArgs)], "waited")
		retryArgs = waitedArgs
	case Mutex:
		retryArgs = append(firstArgs[:len(firstArgs):len(firstArgs)], "retry")
		waitedArgs = append(firstArgs[:len(firstArgs):len(firstArgs)], "waited")
		if tryOnce {
			// A caller that will not wait must not mark the lock
			// contended: its holder's release would publish, and reserve
			// the lock for a waiter that does not exist.
			firstArgs = append(firstArgs[:len(firstArgs):len(firstArgs)], "once")
		}
	}
	call := Call{Script: spec.Kind.scripts().acquire, Keys: spec.keys, Args: firstArgs}
	asWaiter := false // the next attempt follows a wake-up or a retry timer
	gotBusy := false  // ... or at least a busy reply
	var w *waiter
	var hb *heartbeat
	queued := false    // a busy reply left something to undo on giving up (Kind.scripts().leave)
	won := false       // the lock was granted: see wakeups.leave on nudging
	wonWaited := false // ... to an attempt that followed a wake-up or a retry timer
	defer func() {
		if w != nil {
			nudge := spec.Kind.nudgesNextWaiter() || spec.Kind == Mutex && !wonWaited
			l.wakeups.leave(w, won && nudge)
		}
		if hb != nil {
			l.dog.removeHeartbeat(hb)
		}
	}()
	giveUp := func(err error) (time.Time, error) {
		if queued {
			if lerr := l.leaveQueue(ctx, spec, hl.holder); lerr != nil {
				err = errors.Join(err, lerr)
			}
		}
		l.observe(Event{Kind: EventGaveUp, Lock: spec.withLease(), Holder: hl.holder, Waited: time.Since(start), Err: err})
		return time.Time{}, err
	}
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	// sleep waits on w for at most d; a nil error means the next attempt is
	// a waiter's.
	sleep := func(d time.Duration) error {
		if timer == nil {
			timer = time.NewTimer(d)
		} else {
			timer.Reset(d)
		}
		defer func() {
			if !timer.Stop() {
				select {
				case <-timer.C:
				default:
				}
			}
		}()
		select {
		case <-w.wake:
			return nil
		case <-timer.C:
			return nil
		case <-wctx.Done():
			return waitError(wctx, ctx, spec)
		case <-l.closed:
			return fmt.Errorf("%s: %w", spec, ErrClosed)
		}
	}

	if !tryOnce && !reentry {
		var behind time.Time
		w, behind = l.wakeups.joinLive(spec.wake, hl.holder, spec.Kind == Mutex)
		if !behind.IsZero() {
			d := max(time.Until(behind), time.Millisecond)
			if !deadline.IsZero() {
				d = min(d, max(time.Until(deadline), 0))
			}
			if err := sleep(d); err != nil {
				return giveUp(err)
			}
			asWaiter = true
		}
	}
	for {
		call.Args = firstArgs
		switch {
		case asWaiter:
			call.Args = waitedArgs
		case gotBusy:
			call.Args = retryArgs
		}
		sent := time.Now()
		reply, acked, err := l.evalAcquire(wctx, call)
		if err != nil {
			if werr := waitError(wctx, ctx, spec); werr != nil {
				return giveUp(werr)
			}
			return giveUp(fmt.Errorf("lockgen: acquire %s: %w", spec, err))
		}
		flag, n, err := parseAcquire(reply)
		if err != nil {
			return giveUp(fmt.Errorf("lockgen: acquire %s: %w", spec, err))
		}
		if flag == acquireGranted {
			hl.fence, hl.acquired = n, sent
			if l.replicas > 0 && acked < l.replicas {
				rerr := l.releaseOne(&Held{l: l, parent: ctx}, hl)
				queued = false
				return giveUp(errors.Join(fmt.Errorf("%w: %s: %d of %d replicas acknowledged within %v", ErrNotReplicated, spec, acked, l.replicas, l.replicaTimeout), rerr))
			}
			l.observe(Event{Kind: EventAcquired, Lock: spec.withLease(), Holder: hl.holder, Fence: n, Waited: time.Since(start)})
			won, wonWaited = true, asWaiter
			return sent, nil
		}
		// A busy fair acquire keeps the caller's place in the queue; a
		// mutex one may have made it the heir. Either may be handed the
		// lock (see waiter.placeKept), and has something to undo on giving
		// up; so has a writer.
		kept := spec.Kind == Fair || flag == acquireHeir
		queued = queued || spec.Kind.scripts().leave != nil && (spec.Kind != Mutex || kept)
		gotBusy = true
		retry := time.Duration(max(n, 1)) * time.Millisecond
		if flag == acquireHeir {
			// The heirship lasts one lease from this attempt: the retry
			// renews it before it lapses, in case the holder keeps the lock
			// longer than that.
			retry = min(retry, spec.lease*3/4)
		}
		l.observe(Event{Kind: EventBusy, Lock: spec.withLease(), Holder: hl.holder, Waited: retry})
		if tryOnce {
			return giveUp(fmt.Errorf("%w: %s is busy", ErrNotAcquired, spec))
		}
		retryAt := sent.Add(retry)
		if !deadline.IsZero() {
			left := time.Until(deadline)
			if left <= 0 {
				return giveUp(fmt.Errorf("%w: %s still busy after %v", ErrNotAcquired, spec, time.Since(start).Round(time.Millisecond)))
			}
			retry = min(retry, left)
		}
		if hb != nil {
			l.dog.touchHeartbeat(hb, sent)
		}
		if w == nil {
			// Subscribe, then try again at once, not yet as a waiter. A
			// failed subscription leaves the waiter on its timer alone.
			sctx, stop := context.WithTimeout(wctx, retry)
			w, _ = l.wakeups.join(sctx, spec.wake, hl.holder, spec.Kind == Mutex)
			stop()
			l.wakeups.busy(w, sent, retryAt, kept)
			if spec.Kind == Fair {
				hb = l.fairHeartbeat(spec, hl.holder, sent, w)
			}
			asWaiter = false
			continue
		}
		l.wakeups.busy(w, sent, retryAt, kept)
		if spec.Kind == Fair && hb == nil {
			hb = l.fairHeartbeat(spec, hl.holder, sent, w) // joined early
		}
		if err := sleep(retry); err != nil {
			return giveUp(err)
		}
		asWaiter = true
		// A fair release hands the lock to the head of the queue, a mutex
		// release to its heir, and says so in the wake message: no attempt
		// needed. With replica safety on, the waiter claims it with an
		// attempt of its own instead, which the WAIT after it covers.
		if fence, leaseFrom, ok := l.wakeups.grant(w); ok && l.replicas == 0 {
			hl.fence, hl.acquired = fence, leaseFrom
			l.observe(Event{Kind: EventAcquired, Lock: spec.withLease(), Holder: hl.holder, Fence: fence, Waited: time.Since(start)})
			won, wonWaited = true, true
			return leaseFrom, nil
		}
	}
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

// evalAcquire runs an acquire, followed by WAIT when replica safety is on.
func (l *Locker) evalAcquire(ctx context.Context, c Call) (any, int, error) {
	if l.replicas > 0 {
		return l.backend.EvalWait(ctx, c, l.replicas, l.replicaTimeout)
	}
	v, err := l.backend.Eval(ctx, c)
	return v, 0, err
}

// The first element of an acquire script's reply.
const (
	acquireBusy    = 0 // {0, wait_ms}
	acquireGranted = 1 // {1, fence}
	acquireHeir    = 2 // {2, wait_ms}: busy, and the release hands the lock to the caller (mutex)
)

// parseAcquire reads {flag, fence or wait_ms}.
func parseAcquire(reply any) (flag, n int64, err error) {
	arr, ok := reply.([]any)
	if ok && len(arr) == 2 {
		flag, ok1 := arr[0].(int64)
		n, ok2 := arr[1].(int64)
		if ok1 && ok2 && flag >= acquireBusy && flag <= acquireHeir {
			return flag, n, nil
		}
	}
	return 0, 0, fmt.Errorf("unexpected reply %#v", reply)
}

// fairHeartbeat keeps a fair waiter's place alive through the watchdog. If
// the script says the waiter is no longer queued, the waiter is woken to
// acquire again, which queues it anew or claims the lock handed over to it.
func (l *Locker) fairHeartbeat(spec *lockSpec, holder string, sent time.Time, w *waiter) *heartbeat {
	hb := &heartbeat{
		call:  Call{Script: fairHeartbeatScript(), Keys: spec.keys, Args: spec.args(holder, l.publish, false)},
		lease: spec.lease,
		due:   sent.Add(spec.lease / 3),
		kept: func(sent time.Time) {
			if w != nil {
				l.wakeups.placeKept(w, sent)
			}
		},
		evicted: func() {
			if w != nil {
				signal(w)
			}
		},
	}
	l.dog.addHeartbeat(hb)
	return hb
}

// leaveQueue undoes, for a waiter that gives up, what its busy replies left
// behind, at once and on a context that is not cancelled: a fair waiter
// leaves the queue (so those behind it do not wait for its place to die), a
// writer withdraws its hold on new readers (so they do not wait out its
// lease).
func (l *Locker) leaveQueue(ctx context.Context, spec *lockSpec, holder string) error {
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.releaseTimeout)
	defer cancel()
	_, err := l.backend.Eval(lctx, Call{Script: spec.Kind.scripts().leave, Keys: spec.keys, Args: spec.args(holder, l.publish, false)})
	if err != nil {
		return fmt.Errorf("lockgen: give up waiting for %s: %w", spec, err)
	}
	return nil
}
