package runtime

import (
	"context"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/internal/callqueue"
)

// HonorsDeadlines marks b as a Backend whose every call (Eval, EvalBatch,
// EvalWait) returns by its context's deadline by itself, as rueidis's
// client calls do. A Locker over it then runs each script call directly on
// the caller's goroutine, with the deadline on the context, instead of on a
// goroutine of its own with a timer, which it does for a client it cannot
// trust to return in time (a go-redis client whose ContextTimeoutEnabled is
// off, say). Mark only a backend that keeps this promise: a call that
// overstays its deadline would hold up an acquire or a release past the
// bounds the Locker promises.
//
// Concurrent calls over it share round trips (coalesce.go) as they do over
// go-redis: a call that finds several round trips under way joins the next
// batch (EvalBatch), which runs until the earliest deadline of its calls.
// Only a call whose context can end at nothing but its deadline shares
// one; a call its caller may cancel runs alone, on its own context, so
// that a cancellation still reaches the call. (rueidis pipelines such
// calls by itself: letting them wait in the queue instead, as over go-redis
// with ContextTimeoutEnabled, wrote fewer times but ran no faster.)
func HonorsDeadlines(b backend.Backend) backend.Backend {
	d := &deadlineHonoringBackend{Backend: b}
	d.co = callqueue.New(b.Eval, b.EvalBatch)
	d.co.Deadlines = true
	d.co.MaxFlights = maxPipelinedFlights
	return d
}

// maxPipelinedFlights is the coalescer's maxFlights over a backend marked
// HonorsDeadlines. rueidis pipelines concurrent calls by itself, so a call
// sent alone costs little more than one in a batch until many are under
// way: with 4, 16 goroutines on many keys queued often enough to lose 10%
// of their cycles per second; with 12 they run as without a coalescer,
// while 64 and 256 goroutines still save about 2-3 µs of client CPU per
// cycle (8 did no better there, 16 saved less at 64).
const maxPipelinedFlights = 12

type deadlineHonoringBackend struct {
	backend.Backend
	co *callqueue.Coalescer
}

func (d *deadlineHonoringBackend) Eval(ctx context.Context, c backend.Call) (any, error) {
	return d.co.Route(ctx, c)
}

// Caps states the mark over what the marked backend states.
func (d *deadlineHonoringBackend) Caps() backend.Caps {
	c := d.Backend.Caps()
	c.CallBound, c.HonorsDeadline = 0, true
	return c
}
