package runtime

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// A release, and a call left running after its caller stopped waiting for
// it, must end within a bound, whatever their caller's context does. A
// context.WithTimeout per call costs a context and a timer on the hot path
// of every cycle (about five allocations, and the runtime's timer lock). But
// these calls need a bound, not an exact one, so calls with the same bound
// share one deadline: a sharedBound hands out the current one while at
// least 7/8 of the bound is left of it, and makes a new one when less is.
// Each call then ends after between 7/8 of its bound and the bound itself,
// never later, and a new deadline (one timer) is made at most every
// bound/8 per Locker.

// sharedBound hands out deadlines about d ahead.
type sharedBound struct {
	d   time.Duration
	mu  sync.Mutex // serialises the making of a new deadline
	cur atomic.Pointer[sharedDeadline]
}

// sharedDeadline is one deadline that many calls share: done is closed
// when it passes.
type sharedDeadline struct {
	at   time.Time
	done chan struct{}
	// stale is set by a timer once less than 7/8 of the bound is left, so
	// that current can hand the deadline out without reading the clock.
	stale atomic.Bool
}

// get returns a deadline between 7/8 of the bound and the bound after now.
func (b *sharedBound) get(now time.Time) *sharedDeadline {
	if s := b.cur.Load(); s != nil && s.at.Sub(now) >= b.d-b.d/8 {
		return s
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if s := b.cur.Load(); s != nil && s.at.Sub(now) >= b.d-b.d/8 {
		return s // another caller made it meanwhile
	}
	s := &sharedDeadline{at: now.Add(b.d), done: make(chan struct{})}
	time.AfterFunc(time.Until(s.at), func() { close(s.done) })
	time.AfterFunc(b.d/8-time.Since(now), func() { s.stale.Store(true) })
	b.cur.Store(s)
	return s
}

// current is get for a caller without a reading of the clock: while the
// current deadline is not stale it is handed out as it is. A timer that
// fires late lets it go out a little closer than 7/8 of the bound, never
// further than the bound.
func (b *sharedBound) current() *sharedDeadline {
	if s := b.cur.Load(); s != nil && !s.stale.Load() {
		return s
	}
	return b.get(time.Now())
}

// boundedCtx is a context with the values of its embedded Context (never
// cancelled: see callqueue.Detach) and a shared deadline. It is a struct so that it
// can live inside what it serves (a Held, a call in flight) and cost no
// allocation of its own.
type boundedCtx struct {
	context.Context
	dl *sharedDeadline
}

func (c *boundedCtx) Deadline() (time.Time, bool) { return c.dl.at, true }
func (c *boundedCtx) Done() <-chan struct{}       { return c.dl.done }

// Values and WithValues make a boundedCtx a callqueue.DeadlineOnly: a
// batch of calls that end only at their deadline shares the earliest.
func (c *boundedCtx) Values() context.Context { return c.Context }

func (c *boundedCtx) WithValues(values context.Context) context.Context {
	return &boundedCtx{Context: values, dl: c.dl}
}

func (c *boundedCtx) Err() error {
	select {
	case <-c.dl.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

// boundFor returns the Locker's shared bound of d, if it has one: the
// release timeout and the default lease (a call in flight is bounded by
// its lock's lease) are the bounds of the hot path.
func (l *Locker) boundFor(d time.Duration) *sharedBound {
	switch d {
	case l.releaseBound.d:
		return &l.releaseBound
	case l.leaseBound.d:
		return &l.leaseBound
	}
	return nil
}

// boundedContext returns values (a context detached from its caller's
// cancellation, see callqueue.Detach) bounded by d from now: with the shared bound
// of d, in st, or with a timer of its own.
func (l *Locker) boundedContext(values context.Context, now time.Time, d time.Duration, st *boundedCtx) (context.Context, context.CancelFunc) {
	if b := l.boundFor(d); b != nil {
		*st = boundedCtx{Context: values, dl: b.get(now)}
		return st, func() {}
	}
	return context.WithDeadline(values, now.Add(d))
}
