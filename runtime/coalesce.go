package runtime

import (
	"context"
	"sync"
)

// A coalescer lets concurrent script calls share round trips, the way an
// auto-pipelining client does, without making a lone call wait: a call
// that finds fewer than maxFlights round trips under way is sent at once,
// as before; one that finds them all busy joins a queue. When a round trip
// ends, its caller takes the whole queue as one batch and hands it to the
// batch's first call, whose goroutine sends it as one pipeline
// (evalBatchOnce) and then does the same in turn. So a single goroutine
// pays nothing, every caller waits for at most one round trip besides its
// own, and many goroutines on many keys send one write and read one reply
// stream per batch instead of one per call: fewer system calls in the
// client and in Redis, which is where a CPU-bound process spends its time.
//
// A call's outcome is always final when eval returns: a call still queued
// when its context ends is taken out and never sent (ctx.Err(), nothing
// happened), and a call already in a batch waits for that pipeline, which
// the client's own timeouts bound, as they bound a direct call. The
// runtime relies on that: it cleans up after a call only once the call is
// over (call.go).
type coalescer struct {
	direct func(ctx context.Context, c Call) (any, error)
	batch  func(ctx context.Context, calls []Call) []Reply

	mu      sync.Mutex
	flights int // round trips under way (direct calls and pipelines)
	queue   []*queuedCall
}

// maxFlights bounds the round trips a coalescer keeps under way before
// calls queue. Four leave a process with a few goroutines (a hot key's
// holder and its waiters) unqueued: with two, a release could wait behind
// its waiters' registrations, and the handoff at 8 goroutines rose from
// about 2.4 to 2.7-3.4 PING round trips. Many goroutines still share
// pipelines: unbounded, calls never wait but never share either, and 64
// goroutines on many keys made about half the cycles per second.
const maxFlights = 4

// queuedCall is a call waiting for a pipeline. lead receives the batch it
// must send (it is the batch's first call); done is closed once reply is
// final.
type queuedCall struct {
	ctx   context.Context
	c     Call
	sent  bool // in a batch: no longer removable
	reply Reply
	lead  chan []*queuedCall
	done  chan struct{}
}

func newCoalescer(direct func(context.Context, Call) (any, error), batch func(context.Context, []Call) []Reply) *coalescer {
	return &coalescer{direct: direct, batch: batch}
}

// eval runs c, directly or in a pipeline with other queued calls.
func (co *coalescer) eval(ctx context.Context, c Call) (any, error) {
	co.mu.Lock()
	if co.flights < maxFlights {
		co.flights++
		co.mu.Unlock()
		v, err := co.direct(ctx, c)
		co.passOn()
		return v, err
	}
	q := &queuedCall{ctx: ctx, c: c, lead: make(chan []*queuedCall, 1), done: make(chan struct{})}
	co.queue = append(co.queue, q)
	co.mu.Unlock()
	select {
	case <-q.done:
		return q.reply.Value, q.reply.Err
	case batch := <-q.lead:
		co.lead(batch)
		return q.reply.Value, q.reply.Err
	case <-ctx.Done():
	}
	co.mu.Lock()
	if !q.sent {
		co.remove(q)
		co.mu.Unlock()
		return nil, ctx.Err()
	}
	co.mu.Unlock()
	// In a batch already: its outcome comes with the pipeline, which this
	// call may have to send itself.
	select {
	case <-q.done:
	case batch := <-q.lead:
		co.lead(batch)
	}
	return q.reply.Value, q.reply.Err
}

// passOn is called when a round trip has ended: the queue, if any, becomes
// the next batch and its first call's goroutine sends it; otherwise the
// round trip is given back.
func (co *coalescer) passOn() {
	co.mu.Lock()
	if len(co.queue) == 0 {
		co.flights--
		co.mu.Unlock()
		return
	}
	batch := co.queue
	co.queue = nil
	for _, q := range batch {
		q.sent = true
	}
	co.mu.Unlock()
	batch[0].lead <- batch // buffered: its owner picks it up
}

// lead sends batch as one pipeline, hands each call its reply and passes
// the round trip on. It runs with the first call's context values (a
// tracing hook's span) but not its cancellation: one caller giving up must
// not fail the others' calls; the client's timeouts bound it.
func (co *coalescer) lead(batch []*queuedCall) {
	ctx := context.WithoutCancel(batch[0].ctx)
	if len(batch) == 1 {
		// A pipeline of one saves nothing; the direct path is the one every
		// other lone call takes, with the same client behaviour.
		q := batch[0]
		q.reply.Value, q.reply.Err = co.direct(ctx, q.c)
		close(q.done)
		co.passOn()
		return
	}
	calls := make([]Call, len(batch))
	for i, q := range batch {
		calls[i] = q.c
	}
	for i, r := range co.batch(ctx, calls) {
		batch[i].reply = r
		close(batch[i].done)
	}
	co.passOn()
}

// remove takes q, not yet sent, out of the queue; co.mu is held.
func (co *coalescer) remove(q *queuedCall) {
	for i, x := range co.queue {
		if x == q {
			co.queue = append(co.queue[:i], co.queue[i+1:]...)
			return
		}
	}
}
