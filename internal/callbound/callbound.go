// Package callbound gives calls that need a bound, not an exact one,
// deadlines they share: the runtime's releases and the calls it leaves
// running after their callers stopped waiting, which must end within a
// bound whatever their callers' contexts do.
//
// Why: a context.WithTimeout per call costs a context and a timer on the
// hot path of every cycle (about five allocations, and the Go runtime's
// timer lock). Calls with the same bound share one deadline instead: a
// Bound hands out the current one while at least 7/8 of the bound is left
// of it, and makes a new one when less is.
//
// Its guarantees: a call bounded by a Bound of d ends after between 7/8 of
// d and d itself, never later; a new deadline (one timer pair) is made at
// most every d/8 per Bound; handing out a deadline (Current) and binding it
// to a context (Ctx.Bind) allocate nothing.
package callbound

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Bound hands out deadlines about D ahead. Set D before the first Get or
// Current; the zero Bound is otherwise ready to use.
type Bound struct {
	D   time.Duration
	mu  sync.Mutex // serialises the making of a new deadline
	cur atomic.Pointer[Deadline]
}

// Deadline is one deadline that many calls share: its Done channel is
// closed when it passes.
type Deadline struct {
	At   time.Time
	done chan struct{}
	// stale is set by a timer once less than 7/8 of the bound is left, so
	// that Current can hand the deadline out without reading the clock.
	stale atomic.Bool
}

// Get returns a deadline between 7/8 of the bound and the bound after now.
func (b *Bound) Get(now time.Time) *Deadline {
	if s := b.cur.Load(); s != nil && s.At.Sub(now) >= b.D-b.D/8 {
		return s
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if s := b.cur.Load(); s != nil && s.At.Sub(now) >= b.D-b.D/8 {
		return s // another caller made it meanwhile
	}
	s := &Deadline{At: now.Add(b.D), done: make(chan struct{})}
	time.AfterFunc(time.Until(s.At), func() { close(s.done) })
	time.AfterFunc(b.D/8-time.Since(now), func() { s.stale.Store(true) })
	b.cur.Store(s)
	return s
}

// Current is Get for a caller without a reading of the clock: while the
// current deadline is not stale it is handed out as it is. A timer that
// fires late lets it go out a little closer than 7/8 of the bound, never
// further than the bound.
func (b *Bound) Current() *Deadline {
	if s := b.cur.Load(); s != nil && !s.stale.Load() {
		return s
	}
	return b.Get(time.Now())
}

// Ctx is a context with the values of its embedded Context (never
// cancelled: see callqueue.Detach) and a shared deadline. It is a struct
// so that it can live inside what it serves (a Held, a call in flight) and
// cost no allocation of its own.
type Ctx struct {
	context.Context
	dl *Deadline
}

// Bind sets c to values bounded by dl, and returns c.
func (c *Ctx) Bind(values context.Context, dl *Deadline) context.Context {
	*c = Ctx{Context: values, dl: dl}
	return c
}

func (c *Ctx) Deadline() (time.Time, bool) { return c.dl.At, true }
func (c *Ctx) Done() <-chan struct{}       { return c.dl.done }

// Values and WithValues make a Ctx a callqueue.DeadlineOnly: a batch of
// calls that end only at their deadline shares the earliest.
func (c *Ctx) Values() context.Context { return c.Context }

func (c *Ctx) WithValues(values context.Context) context.Context {
	return &Ctx{Context: values, dl: c.dl}
}

func (c *Ctx) Err() error {
	select {
	case <-c.dl.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

// Earliest returns the earlier of two deadlines.
func Earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// Latest returns the later of two deadlines.
func Latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
