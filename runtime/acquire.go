package runtime

import (
	"context"
	"fmt"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/internal/protocol"
	"github.com/lockgen/lockgen/internal/wakeup"
)

// Acquire takes every lock, all or nothing. It sorts them into the canonical
// order (by base key, then kind; the write side of a key before its read
// side), so that two calls can never deadlock on each other, and takes them
// one after the other. If one cannot be had, those already taken are given
// back and the error says why:
//
//   - busy for the whole wait: an error wrapping ErrNotAcquired and naming
//     the lock. The wait is the shortest Wait of the locks: 0 waits until
//     ctx is done, a duration bounds the whole call (a hard bound, plus a
//     grace of a tenth of it, at most 250ms, for an attempt due at its
//     very end), NoWait tries once.
//   - ctx done while waiting: an error wrapping ctx.Err() (and its cause if
//     it has another one), NOT ErrNotAcquired, so that onbusy=skip never
//     hides a cancellation.
//   - no reply from Redis before the wait or ctx ended: an error wrapping
//     context.DeadlineExceeded (or ctx.Err()). Acquire returns on time
//     even while Redis stalls.
//   - a Redis error: wrapped with the lock it concerned.
//   - a malformed Lock: ErrInvalidLock or ErrInvalidKey, before any Redis call.
//
// Whenever Acquire fails after a call whose outcome it does not know, or
// after it registered as a waiter, it gives back in the background whatever
// that call may have taken (EventCleanedUp); nothing stays held in the name
// of a caller that has returned.
//
// On success the locks are renewed by the watchdog (unless NoRenew) until
// Release. Holding is per call chain: if ctx is or derives from a Held's
// Context, a lock that chain holds is re-entered without a Redis call, and
// goes back to Redis when the chain's last hold of it is released; other
// contexts are other holders. Of goroutines sharing one held context, only
// one at a time re-enters an exclusive lock; another acquires as a new
// holder and waits. A writer may take its key's Read side; a chain that
// holds only the Read side cannot take the Write side (it would wait for
// itself): that fails at once with ErrInvalidLock, so release the read
// side first or ask for both in one call.
func (l *Locker) Acquire(ctx context.Context, locks ...Lock) (*Held, error) {
	if l.optErr != nil {
		return nil, l.optErr
	}
	if l.isClosed() {
		return nil, ErrClosed
	}
	h := newHeld(l, ctx, len(locks))
	specs, err := l.resolveAll(locks, h.firstSpec[:0], h.firstKeys[:0])
	if err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		// Cancelled or past its deadline: nothing is sent (a grant would
		// only be given back by the clean-up), and no hold is re-entered
		// (the context of one that was lost or ran out ends with it).
		return nil, waitError(ctx, ctx, &specs[0])
	}
	start := time.Now()
	wait, deadline := waitOf(specs, start)
	chain := chainOf(ctx)
	holder := l.nextHolder()
	if err := checkHolderID(holder); err != nil {
		return nil, err
	}

	hctx, cancel := context.WithCancelCause(ctx)
	h.ctx, h.cancel = hctx, cancel
	var expiry time.Time // earliest NoRenew lease end
	for i := range specs {
		a := &acquisition{l: l, held: h, wctx: hctx, ctx: ctx, spec: &specs[i], holder: holder, start: start, deadline: deadline, tryOnce: wait < 0, fixedHolder: sharesBase(specs[:i], specs[i].base)}
		if i == 0 {
			a.wctx = ctx // no lock of this call yet whose loss could end the wait
			a.fresh = start
		}
		hl := h.lockAt(i)
		err := a.take(chain, hl)
		if err == nil {
			h.locks = append(h.locks, hl)
			err = h.keepAlive(hl, &expiry)
		}
		if err != nil {
			return nil, h.abandon(err)
		}
	}
	if err := h.endBefore(expiry); err != nil {
		return nil, h.abandon(err)
	}
	h.chain = chainCtx{Context: h.ctx, link: chainLink{held: h, parent: chain}}
	h.ctx = &h.chain
	return h, nil
}

// acquisition is one lock being taken by one Acquire call.
type acquisition struct {
	l        *Locker
	held     *Held           // the Held it takes a lock for
	wctx     context.Context // the Held's: a lock of the same call lost meanwhile ends the wait
	ctx      context.Context // the caller's
	spec     *lockSpec
	holder   string
	start    time.Time
	deadline time.Time // zero: until ctx is done
	tryOnce  bool
	// fresh is start while the clock has not moved on much since it was
	// read (see now); zero once used or once the acquisition has waited.
	fresh time.Time

	call        backend.Call // of the acquire script, made by the first attempt
	argv        *argStorage  // where call's values live
	w           *wakeup.Waiter
	hb          *heartbeat
	registered  bool      // a busy reply registered the holder id in Redis (family.registers)
	regSent     time.Time // when the latest attempt that registered a mutex waiter was sent
	firstSent   time.Time // when the first attempt under the holder id was sent (wakeup.Lines.Named)
	busyReplies int
	heldBy      busyHolder // who held the lock at the last busy reply, if it said
	cleaning    bool       // a clean-up of the holder id has been started
	won         bool

	inDoubt         *pending // the call of the last attempt, when it failed transiently
	transientErrors int
	lastTransient   error         // since the latest busy reply
	failingSince    time.Time     // when the first failed attempt since the latest reply was sent
	unreachable     bool          // it failed for the whole unreachable timeout
	backoff         time.Duration // the next pause after a transient error
	fixedHolder     bool          // the holder id is shared (a writer's, or this call's write side of the key)
}

// granted is what an acquisition got: the fence, and how long Redis keeps
// the lock without a renewal, counted from a moment before Redis started
// counting.
type granted struct {
	fence    int64
	from     time.Time
	validFor time.Duration
	learnt   time.Time // when this process learnt of it; read only for observers (see acquired)
	// unclaimed: a mutex offer counted held before it was claimed (see
	// offerHeld); next is the waiter of this process its claim registers
	// (nil if none), under nextHolder.
	unclaimed  bool
	next       *wakeup.Waiter
	nextHolder string
}

// take re-enters a hold of the chain, or acquires the lock in Redis, and
// records it in hl.
func (a *acquisition) take(chain *chainLink, hl *heldLock) error {
	hl.spec, hl.acquired, hl.granted = a.spec, a.start, a.start
	outer, claimed, err := chain.reentry(a.spec)
	if err != nil {
		return err
	}
	switch {
	case outer != nil && outer.spec.Kind == a.spec.Kind && (claimed || outer.claim()):
		if h := a.l.holds.join(outer.hold.key); h != nil {
			hl.hold = h
			if !claimed {
				hl.claimed = outer
			}
			return nil
		}
		if !claimed {
			outer.unclaim()
		}
	case outer != nil && outer.spec.Kind == Write:
		// The writer takes the read side under its own holder id.
		a.holder, a.fixedHolder = outer.hold.key.holder, true
		if h := a.l.holds.join(holdKey{a.spec.base, Read, a.holder}); h != nil {
			hl.hold = h
			return nil
		}
		// Siblings share the holder id: no clean-up of theirs may give
		// back what this one takes (cleanups.Claim).
		key := cleanupKey(a.spec.base, Read, a.holder)
		a.l.cleanups.Claim(key)
		defer a.l.cleanups.Unclaim(key)
	}
	a.argv = &hl.argv
	g, err := a.run()
	if err != nil {
		return err
	}
	hl.hold = a.l.holds.add(&hl.ownHold, holdKey{a.spec.base, a.spec.Kind, a.holder}, g.fence, a.call)
	hl.acquired, hl.validFor, hl.granted = g.from, g.validFor, g.learnt
	if g.unclaimed {
		a.claimLater(hl, g)
	}
	return nil
}

// claimLater has the watchdog claim the offer g, counted held already, as
// hl's first renewal: mutex_renew with the claim's ARGV[4] (the next
// waiter to register, or ""), which restarts the full lease, registers
// that waiter and publishes "taken", and which, unlike mutex_acquire,
// never takes a lock that is not the holder's any more (an offer another
// took after it lapsed, or one given back before the claim ran): that is a
// loss, told as any refused renewal is.
func (a *acquisition) claimLater(hl *heldLock, g granted) {
	hl.offerClaim = withArg(hl.hold.call(a.spec.Kind.scripts().renew), g.nextHolder)
	if next := g.next; next != nil {
		wakeups := a.l.wakeups
		hl.claimFailed = func() { wakeups.Unregistered(next) }
	}
}

// run takes the lock for a.holder, waiting as the call allows.
//
// Waiting does not poll: a waiter sleeps until a wake message, the retry
// time the script returned, the end of the wait, or ctx. An uncontended
// acquire is one round trip. After its first busy reply a waiter joins
// the lock's wake channel (subscribing it if need be) and tries again at
// once, to cover a wake published in between; one that joined before its
// first attempt (other waiters of its process were there) just sleeps. A
// fair release hands the lock to a registered waiter and says so in the
// wake message ("grant:<fence>:<holder>"): that waiter returns without
// another call (handedOver); a mutex release offers it, and the waiter
// claims it with its next attempt. Mutex waiters of one process queue in
// the process, and only the first attempts: its busy reply registers it
// once, and it tries again only when a message comes or the holder's
// lease would end.
func (a *acquisition) run() (granted, error) {
	defer a.finish()
	skip, err := a.enterLine() // skip: the next attempt is not due: this waiter is registered and sleeps first
	if err != nil {
		return granted{}, a.giveUp(err)
	}
	for {
		// Only a subscription live before the attempt ran covers a wake
		// published after it; one that went live since (another waiter's)
		// may have missed it.
		live := a.w != nil && a.l.wakeups.Subscribed(a.w)
		var g granted
		var busy bool
		var retry time.Duration
		var err error
		if skip {
			// Registered by the call that took the lock before it (the
			// waiter ahead in this process): it waits for an offer, or for
			// the end of that holder's lease.
			skip, busy, retry = false, true, a.spec.lease
		} else {
			g, busy, retry, err = a.attempt()
		}
		switch {
		case err != nil && a.inDoubt != nil:
			p := a.inDoubt
			a.inDoubt = nil
			if err := a.recoverFrom(err, p); err != nil {
				return granted{}, a.giveUp(err)
			}
			continue
		case err != nil:
			return granted{}, a.giveUp(err)
		case !busy:
			a.won = true
			return g, nil
		case a.tryOnce:
			return granted{}, a.giveUp(a.heldBy.explain(fmt.Errorf("%w: %s is busy", ErrNotAcquired, a.spec)))
		case !a.deadline.IsZero() && !time.Now().Before(a.deadline):
			return granted{}, a.giveUp(a.heldBy.explain(fmt.Errorf("%w: %s still busy after %v", ErrNotAcquired, a.spec, time.Since(a.start).Round(time.Millisecond))))
		}
		tryNow, err := a.awaitWake(live, retry)
		if err != nil {
			return granted{}, a.giveUp(err)
		}
		if tryNow {
			continue
		}
		if g, ok := a.handedOver(); ok {
			a.won = true
			return g, nil
		}
	}
}

// enterLine joins the line of this process's waiters for the lock, if
// there are any (a.w stays nil otherwise), and waits for its turn. skip
// reports that the call ahead registered this waiter in Redis already: it
// sleeps before its first attempt.
func (a *acquisition) enterLine() (skip bool, err error) {
	if a.tryOnce {
		return false, nil
	}
	a.w = a.l.wakeups.JoinExisting(a.spec.wake, a.holder, a.spec.Kind == Mutex)
	err = a.awaitTurn()
	// A waiter registered by the call ahead of it withdraws that
	// registration if it gives up, even before its turn.
	skip = a.w != nil && a.l.wakeups.RegisteredAhead(a.w)
	a.registered = skip
	return skip, err
}

// awaitTurn waits until a mutex waiter of this process ahead of this one has
// left (a.w nil: no waiter here at all).
func (a *acquisition) awaitTurn() error {
	if a.w == nil {
		return nil
	}
	a.fresh = time.Time{} // it may sleep
	if err := a.sleepUntil(a.w.Turn(), 0); err != nil {
		return err
	}
	if a.l.wakeups.RegisteredAhead(a.w) {
		return nil // it sleeps next: a wake pending now is an offer to it
	}
	select {
	case <-a.w.Wake(): // for the waiters ahead; this one tries now anyway
	default:
	}
	return nil
}

// attempt runs the acquire script once. busy says the lock was busy, and
// retry when to try again at the latest.
func (a *acquisition) attempt() (g granted, busy bool, retry time.Duration, err error) {
	window := a.window()
	if a.tryOnce {
		window = 0
	}
	if a.call.Script == nil {
		a.call = a.l.acquireCall(a.spec, a.holder, window, a.argv)
	}
	call, after := a.withNextWaiter()
	sent := a.now()
	if a.firstSent.IsZero() {
		a.firstSent = sent
	}
	if after != nil {
		// Named before the call goes out: a call whose reply never comes
		// may still register it.
		a.l.wakeups.Named(after, call.Args[len(call.Args)-1], sent)
	}
	bounds := callBounds{now: sent, deadline: a.callDeadline(), orphan: a.spec.lease, values: a.held.detached()}
	reply, acked, p, err := a.l.evalBounded(a.wctx, bounds, call, a.l.replicas > 0)
	if err != nil && a.mayRecover(err, sent) {
		a.inDoubt = p // run gives back what it may have taken, then tries again
		return g, false, 0, fmt.Errorf("lockgen: acquire %s: %w", a.spec, err)
	}
	if err != nil {
		a.withdraw(p)
		return g, false, 0, a.callError(err)
	}
	flag, n, by, err := parseAcquire(reply)
	if err != nil {
		a.withdraw(p)
		return g, false, 0, fmt.Errorf("lockgen: acquire %s: %w", a.spec, err)
	}
	if flag == acquireGranted {
		if a.l.replicas > 0 && acked < a.l.replicas {
			a.withdraw(p)
			return g, false, 0, fmt.Errorf("%w: %s: %d of %d replicas acknowledged within %v", ErrNotReplicated, a.spec, acked, a.l.replicas, a.l.replicaTimeout)
		}
		g = granted{fence: n, from: sent, validFor: a.spec.lease}
		if after != nil {
			a.l.wakeups.Registered(after, call.Args[len(call.Args)-1])
		}
		a.acquired(&g)
		return g, false, 0, nil
	}
	a.busyReplies++
	a.lastTransient, a.failingSince = nil, time.Time{}
	a.heldBy = by
	if a.spec.Kind.family().registers && (a.spec.Kind != Mutex || window > 0) {
		a.registered = true
		a.regSent = sent
		if a.w != nil {
			a.l.wakeups.PlaceKept(a.w, sent, a.keptFor())
			a.l.wakeups.Named(a.w, a.holder, a.firstSent)
		}
	}
	retry = time.Duration(max(n, 1)) * time.Millisecond
	a.l.observe(a.ctx, Event{Kind: EventBusy, Lock: a.spec.withLease(), Holder: a.holder, Waited: retry})
	return g, true, retry, nil
}

// now reads the clock, once per step of the hot path: the first attempt
// of the first lock of an Acquire goes out microseconds after Acquire read
// the clock, and uses that reading (an earlier send time only makes the
// lease origin more cautious). Anything that may have waited reads anew.
func (a *acquisition) now() time.Time {
	if t := a.fresh; !t.IsZero() {
		a.fresh = time.Time{}
		return t
	}
	return time.Now()
}

// acquired tells the observers of the grant g. The clock is read for them
// only: g.learnt is for Event.Held and Event.Waited, which nobody else
// reads.
func (a *acquisition) acquired(g *granted) {
	if !a.l.observed() {
		return
	}
	g.learnt = time.Now()
	a.l.observe(a.ctx, Event{Kind: EventAcquired, Lock: a.spec.withLease(), Holder: a.holder, Fence: g.fence, Waited: g.learnt.Sub(a.start)})
}

func (a *acquisition) finish() {
	if a.w != nil {
		a.l.wakeups.Leave(a.w, a.won && a.spec.Kind.family().nudges)
	}
	if a.hb != nil {
		a.l.dog.RemoveHeartbeat(a.hb)
	}
}

// The first element of an acquire script's reply (internal/protocol).
const (
	acquireBusy    = protocol.AcquireBusy
	acquireGranted = protocol.AcquireGranted
)

// parseAcquire reads an acquire script's reply (protocol.ParseAcquire): a
// busy reply names the holder, and what is left of its lease, where the
// script read them (by; zero otherwise).
func parseAcquire(reply any) (flag, n int64, by busyHolder, err error) {
	a, err := protocol.ParseAcquire(reply)
	if err != nil {
		return 0, 0, busyHolder{}, err
	}
	return a.Flag, a.N, busyHolder{id: a.Holder, left: a.HolderLeft, serverNow: a.ServerNow}, nil
}
