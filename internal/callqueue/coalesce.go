package callqueue

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockgen/lockgen/backend"
)

// A Coalescer lets concurrent script calls share round trips, the way an
// auto-pipelining client does, without making a lone call wait: a call
// that finds fewer than DefaultMaxFlights round trips under way is sent at once,
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
// over (runtime/call.go). A caller that must be free to give up at its deadline
// queues through EvalWithin instead, which hands it the call's pending.
//
// Over a client that stops a call at its context's deadline (a go-redis
// client with ContextTimeoutEnabled; InFront's: rueidis, whose own
// pipelining writes one command per system call when goroutines do not
// queue faster than it writes), a batch runs until the earliest deadline
// of its calls, and only calls that nothing but a deadline can end join
// one through eval: a call its caller may cancel goes out on its own
// round trip (route), counted like any other, unless it waits in the
// queue listening to its context instead (within.go).
type Coalescer struct {
	direct func(ctx context.Context, c backend.Call) (any, error)
	batch  func(ctx context.Context, calls []backend.Call) []backend.Reply
	// deadlines: the client stops a call at its context's deadline
	// (InFront's backend, or go-redis with ContextTimeoutEnabled), so a
	// batch carries the earliest deadline of its calls (batchContext) and
	// only calls that nothing but a deadline can end join one (route).
	Deadlines bool
	// MaxFlights is the package's DefaultMaxFlights (New's), or more over a
	// client that pipelines by itself (InFront's MaxPipelinedFlights).
	MaxFlights int

	mu      sync.Mutex
	flights int // round trips under way (direct calls and pipelines)
	queue   []*queuedCall
	// spare holds the slices of batches sent, for the queues to come: a
	// queue grown once is not grown again call by call.
	spare [][]*queuedCall
}

// DefaultMaxFlights bounds the round trips a Coalescer keeps under way before
// calls queue. Four leave a process with a few goroutines (a hot key's
// holder and its waiters) unqueued: with two, a release could wait behind
// its waiters' registrations, and the handoff at 8 goroutines rose from
// about 2.4 to 2.7-3.4 PING round trips. Many goroutines still share
// pipelines: unbounded, calls never wait but never share either, and 64
// goroutines on many keys made about half the cycles per second.
const DefaultMaxFlights = 4

// queuedCall is a call waiting for a pipeline. Its owner receives one
// message on signal: the batch it must send (it is the batch's first
// call), or nil once reply is final. A queuedCall and its channel are
// used again by later calls (queuedCalls): signal is always drained when
// its owner returns, and nobody else touches a call after signalling it.
type queuedCall struct {
	ctx    context.Context
	c      backend.Call
	sent   bool // in a batch: no longer removable
	leads  bool // the first call of its batch: its owner sends it
	reply  backend.Reply
	signal chan []*queuedCall
	// state and orphan are for an owner that may stop waiting once the
	// call is sent (within.go); other owners never leave it.
	state  atomic.Int32
	orphan *Pending
}

// queuedCalls recycles queuedCalls: a call that queues then costs no
// allocation, where a call and two channels each took one.
var queuedCalls = sync.Pool{New: func() any {
	return &queuedCall{signal: make(chan []*queuedCall, 1)}
}}

func New(direct func(context.Context, backend.Call) (any, error), batch func(context.Context, []backend.Call) []backend.Reply) *Coalescer {
	return &Coalescer{direct: direct, batch: batch, MaxFlights: DefaultMaxFlights}
}

// batchContext is the context of a batch: the first call's values without
// its cancellation, and over a client that honours deadlines, the earliest
// deadline of the batch's calls, so that none of them waits past its own.
// The calls that share a batch there have no deadline or a shared one
// (endsOnlyAtDeadline), which the batch then shares too: neither costs a
// context or a timer per batch.
func (co *Coalescer) batchContext(batch []*queuedCall) (context.Context, context.CancelFunc) {
	values := detachedValues(batch[0].ctx)
	if !co.Deadlines {
		return values, func() {}
	}
	var first context.Context
	var at time.Time
	for _, q := range batch {
		if d, ok := q.ctx.Deadline(); ok && (first == nil || d.Before(at)) {
			first, at = q.ctx, d
		}
	}
	switch b, ok := first.(DeadlineOnly); {
	case first == nil:
		return values, func() {}
	case ok:
		return b.WithValues(values), func() {}
	}
	return context.WithDeadline(values, at)
}

// detachedValues returns ctx's values without its cancellation; a bounded
// context holds them already.
func detachedValues(ctx context.Context) context.Context {
	if b, ok := ctx.(DeadlineOnly); ok {
		return b.Values()
	}
	return Detach(ctx)
}

// cutShort is the error of a call whose batch ran out of time at another
// call's deadline, before its own. Its outcome is unknown, as after a
// client's read timeout, and it is taken the same way: a transient error
// (a net.Error that timed out), not its caller's deadline.
type cutShort struct{}

func (cutShort) Error() string {
	return "lockgen: no reply before the deadline of another call sent in the same pipeline"
}
func (cutShort) Timeout() bool   { return true }
func (cutShort) Temporary() bool { return true }

// settleReply is q's reply r, or cutShort if the batch's deadline ended it
// while q's own has not passed.
func (co *Coalescer) settleReply(q *queuedCall, r backend.Reply) backend.Reply {
	if co.Deadlines && r.Err != nil && errors.Is(r.Err, context.DeadlineExceeded) && q.ctx.Err() == nil {
		r.Err = cutShort{}
	}
	return r
}

// Route runs c through the Coalescer (eval), or, where batches run until
// a deadline (deadlines) and c's caller may cancel it, on its own round
// trip with its own context, where the cancellation reaches the call.
func (co *Coalescer) Route(ctx context.Context, c backend.Call) (any, error) {
	if co.Deadlines && !EndsOnlyAtDeadline(ctx) {
		// A round trip under way like any other: calls that find enough
		// of them queue, and its end sends them.
		co.mu.Lock()
		co.flights++
		co.mu.Unlock()
		v, err := co.direct(ctx, c)
		co.passOn(nil)
		return v, err
	}
	return co.eval(ctx, c)
}

// eval runs c, directly or in a pipeline with other queued calls.
func (co *Coalescer) eval(ctx context.Context, c backend.Call) (any, error) {
	co.mu.Lock()
	if co.flights < co.MaxFlights {
		co.flights++
		co.mu.Unlock()
		v, err := co.direct(ctx, c)
		co.passOn(nil)
		return v, err
	}
	q := queuedCalls.Get().(*queuedCall)
	q.ctx, q.c, q.sent = ctx, c, false
	co.queue = append(co.queue, q)
	co.mu.Unlock()
	done := ctx.Done()
	if done == nil {
		return co.settle(q, <-q.signal) // a context that never ends: no select
	}
	select {
	case batch := <-q.signal:
		return co.settle(q, batch)
	case <-done:
	}
	co.mu.Lock()
	if !q.sent {
		co.remove(q)
		co.mu.Unlock()
		q.recycle()
		return nil, ctx.Err()
	}
	co.mu.Unlock()
	// In a batch already: its outcome comes with the pipeline, which this
	// call may have to send itself.
	return co.settle(q, <-q.signal)
}

// settle sends batch if q is to lead it, and returns q's reply, recycling q.
func (co *Coalescer) settle(q *queuedCall, batch []*queuedCall) (any, error) {
	if batch != nil {
		co.lead(batch)
		<-q.signal // lead delivered q's reply too; buffered, so no wait
	}
	return q.take()
}

// recycle gives q back to queuedCalls, holding on to nothing of its call.
func (q *queuedCall) recycle() {
	q.ctx, q.c, q.reply, q.leads, q.orphan = nil, backend.Call{}, backend.Reply{}, false, nil
	q.state.Store(callWaiting)
	queuedCalls.Put(q)
}

// passOn is called when a round trip has ended, with the batch it carried
// if it was one (its slice is kept for reuse): the queue, if any, becomes
// the next batch and its first call's goroutine sends it; otherwise the
// round trip is given back.
func (co *Coalescer) passOn(sent []*queuedCall) {
	co.mu.Lock()
	// At most one slice per batch that can be under way, and the queue's.
	if sent != nil && len(co.spare) <= co.MaxFlights {
		clear(sent)
		co.spare = append(co.spare, sent[:0])
	}
	if len(co.queue) == 0 {
		co.flights--
		co.mu.Unlock()
		return
	}
	batch := co.queue
	co.queue = nil
	if n := len(co.spare); n > 0 {
		co.queue, co.spare = co.spare[n-1], co.spare[:n-1]
	}
	for _, q := range batch {
		q.sent = true
	}
	batch[0].leads = true
	co.mu.Unlock()
	batch[0].signal <- batch // buffered: its owner picks it up
}

// lead sends batch as one pipeline, hands each call its reply (deliver)
// and passes the round trip on. It runs with the first call's context
// values (a tracing hook's span) but not its cancellation: one caller
// giving up must not fail the others' calls; the client's timeouts bound
// it. Its goroutine is the first call's owner's (settle), or one of its own
// for an owner that must stay free to give up (within.go).
func (co *Coalescer) lead(batch []*queuedCall) {
	ctx, cancel := co.batchContext(batch)
	defer cancel()
	if len(batch) == 1 {
		// A pipeline of one saves nothing; the direct path is the one every
		// other lone call takes, with the same client behaviour.
		var r backend.Reply
		r.Value, r.Err = co.direct(ctx, batch[0].c)
		co.deliver(batch[0], r)
		co.passOn(batch)
		return
	}
	calls := make([]backend.Call, len(batch))
	for i, q := range batch {
		calls[i] = q.c
	}
	for i, r := range co.batch(ctx, calls) {
		co.deliver(batch[i], r)
	}
	co.passOn(batch)
}

// remove takes q, not yet sent, out of the queue; co.mu is held.
func (co *Coalescer) remove(q *queuedCall) {
	for i, x := range co.queue {
		if x == q {
			co.queue = append(co.queue[:i], co.queue[i+1:]...)
			return
		}
	}
}

// Load returns the round trips under way and the calls queued, for tests
// that wait until calls have reached the queue.
func (co *Coalescer) Load() (flights, queued int) {
	co.mu.Lock()
	defer co.mu.Unlock()
	return co.flights, len(co.queue)
}
