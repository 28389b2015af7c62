package callqueue

import (
	"context"

	"github.com/lockgen/lockgen/backend"
)

// InFront returns b with a Coalescer in front of its Eval, and that
// Coalescer, for a backend whose calls end at their contexts' deadlines by
// themselves (Caps.HonorsDeadline) and that has no queue of its own:
// rueidis's, say. Concurrent calls over it then share round trips as over
// go-redis: a call that finds MaxPipelinedFlights round trips under way
// joins the next batch (b's EvalBatch), which runs until the earliest
// deadline of its calls. Only a call whose context can end at nothing but
// its deadline shares one; a call its caller may cancel runs alone, on its
// own context, so that a cancellation still reaches the call. (rueidis
// pipelines such calls by itself: letting them wait in the queue instead,
// as over go-redis with ContextTimeoutEnabled, wrote fewer times but ran
// no faster.) EvalBatch, EvalWait and the rest go to b as they are, and so
// does Caps: the wrapper changes nothing b states.
func InFront(b backend.Backend) (backend.Backend, *Coalescer) {
	co := New(b.Eval, b.EvalBatch)
	co.Deadlines = true
	co.MaxFlights = MaxPipelinedFlights
	return &frontedBackend{Backend: b, co: co}, co
}

// MaxPipelinedFlights is the MaxFlights of InFront's Coalescer. rueidis
// pipelines concurrent calls by itself, so a call sent alone costs little
// more than one in a batch until many are under way: with 4, 16 goroutines
// on many keys queued often enough to lose 10% of their cycles per second;
// with 12 they run as without a coalescer, while 64 and 256 goroutines
// still save about 2-3 µs of client CPU per cycle (8 did no better there,
// 16 saved less at 64).
const MaxPipelinedFlights = 12

type frontedBackend struct {
	backend.Backend
	co *Coalescer
}

func (f *frontedBackend) Eval(ctx context.Context, c backend.Call) (any, error) {
	return f.co.Route(ctx, c)
}
