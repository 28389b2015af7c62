package callqueue

import (
	"context"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/internal/callerr"
)

// A call whose caller stops waiting at a deadline, over a client that does
// not stop there by itself (go-redis without ContextTimeoutEnabled, where
// one call may take about a minute at the defaults), needs a goroutine
// other than its caller's to run on (evalAsync), which the caller leaves
// when it gives up. Most such calls are acquires of callers with a request
// deadline, and under load most of them would queue in the Coalescer
// anyway. So one that finds
// the round trips busy waits in the queue itself, listening to its context
// and its deadline as well (EvalWithin): taken out if it gives up before
// it is sent (nothing happened), or left to its batch with a pending that
// the batch settles (runtime/call.go) if it gives up after. The batch it is to
// lead goes out on a goroutine of its own, one per batch rather than one
// per call, since its caller must stay free to give up. A call that would
// go out at once still runs on a goroutine of its own.
//
// The same wait lets a call its caller may cancel share a pipeline over a
// go-redis client with ContextTimeoutEnabled, where a batch runs until the
// earliest deadline of its calls and a cancellation could not reach the
// call once it is in one: otherwise such a call goes out alone (route).

// Call states, in queuedCall.state: the batch's settler and an owner that
// gives up race for the call once it is sent, and whoever moves it out of
// callWaiting decides who recycles it.
const (
	callWaiting   int32 = iota // its owner waits for the reply
	callSettled                // the reply is final; its owner reads it
	callAbandoned              // its owner gave up; orphan gets the outcome
)

// EvalWithin runs c through the queue for a caller that stops waiting when
// ctx is done or deadline passes (zero: only ctx). queued is false, and
// nothing was done, when c would go out at once: the caller runs it some
// other way. Otherwise p is the call's pending: finished with the reply,
// or still running (err is callerr.ErrNoReply) if the caller gave up after it was
// sent.
func (co *Coalescer) EvalWithin(ctx context.Context, c backend.Call, deadline time.Time) (v any, p *Pending, err error, queued bool) {
	co.mu.Lock()
	if co.flights < co.MaxFlights {
		co.mu.Unlock()
		return nil, nil, nil, false
	}
	q := queuedCalls.Get().(*queuedCall)
	q.ctx, q.c, q.sent = ctx, c, false
	co.queue = append(co.queue, q)
	co.mu.Unlock()
	var stop <-chan time.Time
	if !deadline.IsZero() {
		t := time.NewTimer(time.Until(deadline))
		defer t.Stop()
		stop = t.C
	}
	select {
	case batch := <-q.signal:
		if batch == nil {
			v, err = q.take()
			return v, Finished(err), err, true
		}
		go co.lead(batch) // q is its first call
	case <-ctx.Done():
		return co.giveUp(q)
	case <-stop:
		return co.giveUp(q)
	}
	select {
	case <-q.signal: // nil: settled
		v, err = q.take()
		return v, Finished(err), err, true
	case <-ctx.Done():
	case <-stop:
	}
	return co.abandon(q)
}

// giveUp handles a caller that stops waiting while q may still be queued:
// taken out, q was never sent; sent, it is left to its batch, which q's
// owner must send first if it is the batch's lead.
func (co *Coalescer) giveUp(q *queuedCall) (any, *Pending, error, bool) {
	co.mu.Lock()
	if !q.sent {
		co.remove(q)
		co.mu.Unlock()
		q.recycle()
		return nil, NeverSent, callerr.ErrNoReply, true // never sent: its pending is over already, and nothing needs giving back
	}
	leads := q.leads
	co.mu.Unlock()
	if leads {
		// passOn sends the batch right after marking it sent, to a
		// buffered channel: this receive does not wait on Redis.
		go co.lead(<-q.signal)
	}
	return co.abandon(q)
}

// abandon leaves q, sent, to its batch: the settler closes the pending it
// returns when the pipeline ends. If the reply came first, it is returned.
func (co *Coalescer) abandon(q *queuedCall) (any, *Pending, error, bool) {
	p := &Pending{Done: make(chan struct{})}
	q.orphan = p
	if q.state.CompareAndSwap(callWaiting, callAbandoned) {
		return nil, p, callerr.ErrNoReply, true
	}
	<-q.signal // settled meanwhile: its nil is on the way
	v, err := q.take()
	return v, Finished(err), err, true
}

// take returns q's reply and recycles q.
func (q *queuedCall) take() (any, error) {
	v, err := q.reply.Value, q.reply.Err
	q.recycle()
	return v, err
}

// deliver hands q its reply r: to its owner, or, if the owner gave up, to
// the pending it left.
func (co *Coalescer) deliver(q *queuedCall, r backend.Reply) {
	q.reply = co.settleReply(q, r)
	if q.state.CompareAndSwap(callWaiting, callSettled) {
		q.signal <- nil // buffered; q is its owner's again
		return
	}
	p := q.orphan
	p.Err = q.reply.Err
	q.recycle()
	close(p.Done)
}
