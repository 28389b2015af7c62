package runtime

import (
	"context"
	"time"

	"github.com/lockgen/lockgen/internal/callbound"
)

// A release, and a call left running after its caller stopped waiting for
// it, must end within a bound, whatever their caller's context does; calls
// with the same bound share one deadline (internal/callbound). The Locker
// keeps one Bound per bound of its hot path, and each Held and call in
// flight the context it binds to it.
type (
	sharedBound = callbound.Bound
	boundedCtx  = callbound.Ctx
)

// boundFor returns the Locker's shared bound of d, if it has one: the
// release timeout and the default lease (a call in flight is bounded by
// its lock's lease) are the bounds of the hot path.
func (l *Locker) boundFor(d time.Duration) *sharedBound {
	switch d {
	case l.releaseBound.D:
		return &l.releaseBound
	case l.leaseBound.D:
		return &l.leaseBound
	}
	return nil
}

// boundedContext returns values (a context detached from its caller's
// cancellation, see callqueue.Detach) bounded by d from now: with the shared bound
// of d, in st, or with a timer of its own.
func (l *Locker) boundedContext(values context.Context, now time.Time, d time.Duration, st *boundedCtx) (context.Context, context.CancelFunc) {
	if b := l.boundFor(d); b != nil {
		return st.Bind(values, b.Get(now)), func() {}
	}
	return context.WithDeadline(values, now.Add(d))
}
