package runtime

import (
	"context"
	"fmt"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/internal/wakeup"
	"github.com/lockgen/lockgen/lua"
)

// How a waiting acquisition waits (acquire.go's run loop calls these): the
// request that keeps its place in the queue, the next waiter it names, its
// wake channel and heartbeat, the sleep between attempts, and a hand-over
// (a fair grant or a mutex offer) learnt while it slept.

// awaitWake waits after a busy reply until the next attempt is due: it
// joins the lock's wake channel, and sleeps until a wake-up, retry (unless
// the heartbeat looks at the lock instead) or the end of the wait. live
// says whether the subscription was live before the attempt ran. tryNow
// reports that the waiter has just subscribed and tries again at once, to
// cover a wake published in between.
func (a *acquisition) awaitWake(live bool, retry time.Duration) (tryNow bool, err error) {
	if a.w == nil {
		a.w = a.l.wakeups.Join(a.spec.wake, a.holder, a.spec.Kind == Mutex, true)
		a.l.wakeups.PlaceKept(a.w, a.regSent, a.keptFor())
		a.l.wakeups.Named(a.w, a.holder, a.firstSent)
	}
	if !live && a.subscribe(retry) {
		return true, nil
	}
	if err := a.l.wakeups.Denial(a.w); err != nil {
		return false, err // no silent fall-back to timers (noperm.go)
	}
	if a.l.wakeups.Failed(a.w) {
		// No wake-up will come, and Redis may be going away: the next
		// attempt comes after a transient pause, not at the end of the
		// holder's lease (a fair waiter's retry), so that it meets the
		// error and recovers (acquire_recover.go) or subscribes, within its
		// wait.
		retry = min(retry, transientBackoffMax)
	}
	if a.keepPlace() && a.l.wakeups.Subscribed(a.w) && !a.l.wakeups.Failed(a.w) {
		// The heartbeat keeps the place and looks at the lock when
		// its lease would end (handing a lock whose holder died to
		// the head), and a grant or an eviction wakes this waiter:
		// an attempt of its own at that moment would only repeat it.
		// (Without a live subscription a grant could go unheard: the
		// waiter keeps its timer.)
		retry = 0
	}
	return false, a.sleepUntil(nil, retry)
}

// keptFor is how long a request that keeps the waiter's place keeps it:
// the registration window of a mutex waiter, the lease of a fair one.
func (a *acquisition) keptFor() time.Duration {
	if a.spec.Kind == Mutex {
		return a.window()
	}
	return a.spec.lease
}

// window is mutex_acquire's ARGV[4] for a waiter: any value but 0
// registers a busy caller (protocol 2 keeps no deadline of it; the
// Locker's window, capped by the lease, is sent as protocol 1 did).
func (a *acquisition) window() time.Duration { return min(a.l.waiterWindow, a.spec.lease) }

// withNextWaiter returns the call of the next attempt. A mutex waiter
// that is first in its process's line, with another behind it, names that
// one (ARGV[5]): the call that takes or claims the lock registers it, so
// that a grant costs no registration call of its own, whatever the number
// of waiters. after is the waiter named, nil if none.
func (a *acquisition) withNextWaiter() (backend.Call, *wakeup.Waiter) {
	if a.spec.Kind != Mutex || a.w == nil || a.tryOnce {
		return a.call, nil
	}
	after, holder := a.l.wakeups.NextInLine(a.w)
	if after == nil {
		return a.call, nil
	}
	c := a.call
	c.Args = append(c.Args[:len(c.Args):len(c.Args)], holder)
	return c.WithBoxed(nil), after
}

// subscribe subscribes a.w's channel, bounded by the retry time and the
// wait, and reports whether it is subscribed now.
func (a *acquisition) subscribe(retry time.Duration) bool {
	ctx, cancel := context.WithTimeout(a.wctx, retry)
	defer cancel()
	if !a.deadline.IsZero() {
		var stop context.CancelFunc
		ctx, stop = context.WithDeadline(ctx, a.deadline)
		defer stop()
	}
	return a.l.wakeups.Subscribe(ctx, a.w)
}

// keepPlace starts the heartbeat that keeps a fair waiter's place in the
// queue while it sleeps (the watchdog sends it); each attempt counts as one.
// It reports whether the waiter has a heartbeat.
func (a *acquisition) keepPlace() bool {
	if a.spec.Kind.scripts().heartbeat == nil {
		return false
	}
	if a.hb != nil {
		a.l.dog.TouchHeartbeat(a.hb, a.regSent, a.heldBy.serverNow)
		return true
	}
	// The callbacks capture no *acquisition, which can then stay on the
	// stack of Acquire.
	l, w, keptFor := a.l, a.w, a.keptFor()
	a.hb = &heartbeat{
		Call:    commonCall(a.call, a.spec.Kind.scripts().heartbeat),
		Lease:   a.spec.lease,
		Kept:    func(sent time.Time) { l.wakeups.PlaceKept(w, sent, keptFor) },
		Evicted: func() { w.Signal() },
	}
	a.l.dog.AddHeartbeat(a.hb, a.regSent, a.heldBy.serverNow)
	return true
}

// sleepUntil waits for ready (if not nil), a wake-up, d (if not 0), or the
// end of the wait. A nil error means the next attempt may go.
func (a *acquisition) sleepUntil(ready <-chan struct{}, d time.Duration) error {
	var wake <-chan struct{}
	if ready == nil {
		wake = a.w.Wake()
	}
	if !a.deadline.IsZero() && (d == 0 || time.Until(a.deadline) < d) {
		d = max(time.Until(a.deadline), time.Nanosecond)
	}
	var expire <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		expire = t.C
	}
	select {
	case <-ready:
	case <-wake:
	case <-expire:
		if ready != nil {
			return fmt.Errorf("%w: %s still busy after %v (waiters of this process ahead)", ErrNotAcquired, a.spec, time.Since(a.start).Round(time.Millisecond))
		}
	case <-a.wctx.Done():
		return a.waitError(nil)
	case <-a.l.closed:
		return fmt.Errorf("%s: %w", a.spec, ErrClosed)
	}
	return nil
}

// handedOver reports whether a fair release handed the lock to the waiter.
// Its lease is counted from the request that kept its place (the grant
// lives in Redis until that place would have run out, which is at least
// as long after that request was sent). A renew=false lock, a lock under
// replica safety, a grant that has little of that left, and every mutex
// offer are claimed with one more attempt, which finds the lock the
// waiter's own and gives it a full lease (and WAIT covers it).
func (a *acquisition) handedOver() (granted, bool) {
	seen, ok := a.l.wakeups.TakeGrant(a.w)
	if !ok {
		return granted{}, false
	}
	if a.spec.Kind == Mutex {
		return a.offerHeld(seen)
	}
	g := granted{fence: seen.Fence, from: seen.PlaceKept, validFor: a.spec.lease}
	left := time.Until(g.from.Add(g.validFor))
	if a.spec.NoRenew || a.l.replicas > 0 || seen.Lapsed || left < g.validFor/2 {
		return granted{}, false // the next attempt claims it
	}
	a.acquired(&g)
	return g, true
}

// offerHeld reports whether the mutex offer seen counts as held before it
// is claimed. Redis keeps an offer in the waiter's name for the offer's
// lease (lua.MutexOffer) from the moment it is made, and it is made after
// two moments the waiter knows: the send time of the first request that
// could register its holder id (Grant.Since; a message, however late,
// cannot be older), and, for an offer learnt from the reply of a release
// of this Locker, that release's send time. Counted from the later of the
// two, the offer is the waiter's until then: like a grant whose lease
// counts from the send time of its request. It returns at once, and the
// claim follows as the first renewal (claimLater). A renew=false lock, a
// lock under replica safety, and an offer with less than half its lease
// left by that count (a waiter that waited long, or a message that came
// late) are claimed first, with the waiter's next attempt, which finds the
// lock its own (or, if the offer lapsed and another took it, busy).
func (a *acquisition) offerHeld(seen wakeup.Grant) (granted, bool) {
	from := seen.ReleaseSent
	if seen.Since.After(from) {
		from = seen.Since
	}
	if from.IsZero() || a.spec.NoRenew || a.l.replicas > 0 {
		return granted{}, false
	}
	validFor := min(a.spec.lease, lua.MutexOffer)
	if time.Until(from.Add(validFor)) < validFor/2 {
		return granted{}, false
	}
	g := granted{fence: seen.Fence, from: from, validFor: validFor, unclaimed: true}
	if a.call.Script == nil {
		// Registered by the call ahead, this waiter made no call: the
		// hold's calls are made from this one.
		a.call = a.l.acquireCall(a.spec, a.holder, a.window(), a.argv)
	}
	// The claim registers the next waiter of this process, which must
	// know it before this one leaves the line and gives it its turn.
	if after, holder := a.l.wakeups.NextInLine(a.w); after != nil {
		a.l.wakeups.Named(after, holder, time.Now()) // the claim goes out later
		a.l.wakeups.Registered(after, holder)
		g.next, g.nextHolder = after, holder
	}
	a.acquired(&g)
	return g, true
}
