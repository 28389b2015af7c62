package runtime

import (
	"context"
	"errors"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/internal/callerr"
	"github.com/lockgen/lockgen/internal/callqueue"
	"github.com/lockgen/lockgen/internal/goredis"
)

// Every call to Redis can time out, be retried by the client, or run
// without its reply ever arriving. go-redis, by default, does not even stop
// reading when the context ends (its own read timeout decides). So a call
// made while waiting runs in its own goroutine, and the waiter stops
// listening when its context or its wait ends: the wait is a hard bound,
// whatever the server or the client does. The call itself goes on, on a
// context the caller cannot cancel, so that it is never cut off half
// written; when it ends, the clean-up (cleanup_link.go) knows that no more of it
// can reach Redis.

// errNoReply says that a call's reply did not arrive before the caller's
// context or wait ended: its outcome is unknown.
var errNoReply = callerr.ErrNoReply

// pending is a call whose reply the caller stopped waiting for: Done is
// closed when the call has returned, and Err is then its error (nil if a
// reply arrived after all). The backend's queue hands out the same
// (callqueue.Pending).
type pending = callqueue.Pending

// callBounds says how long a call may run. Its caller waits until its
// context is done or deadline (zero: none) passes; once nobody waits, the
// call itself ends within orphan. now is when it is sent (a reading taken
// at most microseconds earlier). values, if not nil, is the caller's
// context detached from its cancellation (detach), made once by a caller
// that needs it more than once.
type callBounds struct {
	now, deadline time.Time
	orphan        time.Duration
	values        context.Context
}

// evalBounded runs c, returning early with errNoReply (and the call still
// running, as p) when ctx is done or b.deadline passes.
//
// It runs c directly, without a goroutine, when that is bounded as well:
// no deadline at all (a cancellation is then noticed when the call
// returns, within the client's own timeouts), or a client that stops at
// the deadline by itself, or one whose own timeouts end every call before
// the deadline. Otherwise c waits in the backend's queue if it would
// queue (coalesced), or runs on a goroutine of its own (evalAsync).
func (l *Locker) evalBounded(ctx context.Context, b callBounds, c backend.Call, wait bool) (reply any, acked int, p *pending, err error) {
	// end is when the caller stops waiting; own is b.deadline if ctx does
	// not end sooner or at the same time, zero otherwise: ctx's own
	// deadline needs no timer or context more, since ctx.Done fires at it.
	deadline := b.deadline
	end, own := deadline, deadline
	if d, ok := ctx.Deadline(); ok && (deadline.IsZero() || !deadline.Before(d)) {
		end, own = d, time.Time{}
	}
	direct := l.direct(b.now, end)
	// A call that needs more than the caller's goroutine to stay bounded,
	// or that its caller may cancel over a client that ends calls at
	// deadlines only, waits in the queue when it would queue anyway
	// (coalesce_within.go): no goroutine of its own, and it still shares
	// a pipeline.
	if (!direct || l.caps.HonorsDeadline && !callqueue.EndsOnlyAtDeadline(ctx)) && !wait {
		if l.queue != nil {
			if v, p, err, queued := l.queue.EvalWithin(ctx, c, own); queued {
				return v, 0, p, callerr.NamePermissionError(err, c.Script)
			}
		}
	}
	if !direct {
		b.deadline = own
		return l.evalAsync(ctx, b, c, wait)
	}
	if !own.IsZero() && l.caps.HonorsDeadline {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, own)
		defer cancel()
	}
	reply, acked, err = l.eval(ctx, c, wait)
	if err != nil && !end.IsZero() && !time.Now().Before(end) {
		err = errors.Join(errNoReply, err)
	}
	return reply, acked, callqueue.Finished(err), err
}

// eval runs c, followed by WAIT if wait is set.
func (l *Locker) eval(ctx context.Context, c backend.Call, wait bool) (any, int, error) {
	if wait {
		return l.backend.EvalWait(ctx, c, l.replicas, l.replicaTimeout)
	}
	v, err := l.backend.Eval(ctx, c)
	return v, 0, err
}

// asyncCall is a call running in a goroutine of its own: its pending, its
// reply (written before done is closed) and its context, in one allocation.
type asyncCall struct {
	pending
	reply any
	acked int
	ctx   boundedCtx
}

// evalAsync is evalBounded's call in a goroutine of its own, for a client
// that could run past the caller's deadline: ctx's own, or b.deadline if
// that is not zero.
func (l *Locker) evalAsync(ctx context.Context, b callBounds, c backend.Call, wait bool) (any, int, *pending, error) {
	ac := &asyncCall{pending: pending{Done: make(chan struct{})}}
	if b.values == nil {
		b.values = callqueue.Detach(ctx)
	}
	cctx, cancel := l.boundedContext(b.values, b.now, b.orphan, &ac.ctx)
	go func() {
		defer cancel()
		ac.reply, ac.acked, ac.Err = l.eval(cctx, c, wait)
		close(ac.Done)
	}()
	var expire <-chan time.Time
	if !b.deadline.IsZero() {
		t := time.NewTimer(time.Until(b.deadline)) // b.now may be a reading taken a little earlier
		defer t.Stop()
		expire = t.C
	}
	select {
	case <-ac.Done:
		return ac.reply, ac.acked, &ac.pending, ac.Err
	case <-ctx.Done():
	case <-expire:
	}
	return nil, 0, &ac.pending, errNoReply
}

// coalesced returns b with what lets its concurrent calls share round
// trips, and the queue of those calls, where a call may wait for a shared
// pipeline until its caller gives up (callqueue's EvalWithin). The go-redis
// backend has its queue (nil on a Cluster); a backend whose calls end at
// their deadlines by themselves (Caps.HonorsDeadline) gets a coalescer in
// front of it (callqueue.InFront), except a quorum, whose EvalBatch takes
// renewals only; any other has none, and a call that must be free to give
// up runs on a goroutine of its own. Only the backend the Locker was given
// is asked, and an option that wraps it (WithRestartGuard) drops the queue,
// so that no call reaches it past a wrapper that must see it.
func coalesced(b backend.Backend) (backend.Backend, *callqueue.Coalescer) {
	if co, ok := goredis.QueueOf(b); ok {
		return b, co
	}
	if caps := b.Caps(); caps.HonorsDeadline && !caps.Quorum {
		return callqueue.InFront(b)
	}
	return b, nil
}

// direct reports whether a call sent at now that must end by deadline
// (zero: none) can run without a goroutine of its own (see evalBounded).
func (l *Locker) direct(now, deadline time.Time) bool {
	switch {
	case deadline.IsZero(), l.caps.HonorsDeadline:
		return true
	case l.caps.CallBound > 0:
		return deadline.Sub(now) > l.caps.CallBound
	}
	return false
}
