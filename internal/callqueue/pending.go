// Package callqueue lets concurrent script calls share round trips (the
// Coalescer), in front of a backend that states Caps.HonorsDeadline
// (InFront) and inside the go-redis backend alike, and holds what a call
// left running is to its caller (a Pending).
//
// Its guarantees: a call's outcome is final when Route returns (a call
// taken out of the queue was never sent); a caller of EvalWithin is free
// at its context's end or its deadline, and the Pending it gets is settled
// when the pipeline its call went out in ends; a batch never outlives the
// earliest deadline of its calls over a client that ends calls at their
// deadlines.
package callqueue

import (
	"context"

	"github.com/lockgen/lockgen/internal/callerr"
)

// Pending is a call whose reply the caller stopped waiting for. Done is
// closed when the call has returned, and Err is then its error (nil if a
// reply arrived after all).
type Pending struct {
	Done chan struct{}
	Err  error
}

// Finished returns a Pending for a call that has already returned.
func Finished(err error) *Pending {
	if err == nil {
		return Returned
	}
	p := &Pending{Done: make(chan struct{}), Err: err}
	close(p.Done)
	return p
}

// Returned is the Pending of every call that returned with a reply:
// shared, since nothing writes to a finished Pending, so that the common
// case allocates nothing.
var Returned = func() *Pending {
	p := &Pending{Done: make(chan struct{})}
	close(p.Done)
	return p
}()

// NeverSent is the Pending of a call taken out of a queue before it was
// sent (callerr.ErrNeverSent): it certainly did not run.
var NeverSent = Finished(callerr.ErrNeverSent)

// DeadlineOnly is a context that can end at nothing but its deadline: the
// runtime's bounded contexts (a release's, a call's left running), whose
// Done is a deadline many of them share. A batch of such calls shares that
// deadline too, without a timer of its own.
type DeadlineOnly interface {
	context.Context
	// Values is the context's values, never cancelled.
	Values() context.Context
	// WithValues returns values bounded by the same shared deadline.
	WithValues(values context.Context) context.Context
}

// EndsOnlyAtDeadline reports whether ctx can end at nothing but its
// deadline, if it has one: a context that is never done, or a
// DeadlineOnly.
func EndsOnlyAtDeadline(ctx context.Context) bool {
	if ctx.Done() == nil {
		return true
	}
	_, ok := ctx.(DeadlineOnly)
	return ok
}

// Detach returns ctx's values without its cancellation. A context that can
// never be cancelled is returned as it is, which costs nothing; only a
// cancellable one needs WithoutCancel, which also hides its cause from
// context.Cause.
func Detach(ctx context.Context) context.Context {
	if ctx.Done() == nil {
		return ctx
	}
	return context.WithoutCancel(ctx)
}
