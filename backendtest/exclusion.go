package backendtest

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockgen/lockgen/runtime"
)

// Rounds of the mutual exclusion scenario: 2 Lockers of 3 goroutines each
// take the lock 6 times.
const (
	exclusionLockers    = 2
	exclusionGoroutines = 3
	exclusionRounds     = 6
)

// critical is what the holders of one lock share: who is inside, a counter
// only the lock keeps from losing updates, and the last exclusive fence.
type critical struct {
	holders, readers, most atomic.Int32 // holders: all but readers
	counter, done          atomic.Int64 // atomics for the race detector only: the lock orders them
	lastFence              atomic.Int64
	errs                   chan error
}

// mutualExclusion: goroutines of two Lockers take the lock round after
// round. An exclusive holder is alone inside (for read/write: every other
// goroutine writes, the others read, and a writer excludes readers), a
// semaphore's holders never exceed its permits, no update of the shared
// counter is lost, and exclusive holders' fences rise. Every waiter must
// be woken by a message: the lease is longer than the scenario's context.
func mutualExclusion(e *env, kind runtime.Kind) {
	t := e.t
	ctx := e.ctx(45 * time.Second)
	c := &critical{errs: make(chan error, exclusionLockers*exclusionGoroutines*exclusionRounds)}
	var wg sync.WaitGroup
	for range exclusionLockers {
		l := e.locker()
		for g := range exclusionGoroutines {
			lock := lockOf(kind, "excl", longLease)
			if kind == runtime.Read && g%2 == 0 {
				lock.Kind = runtime.Write
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				for r := range exclusionRounds {
					h, err := l.Acquire(ctx, lock)
					if err != nil {
						c.report("%v round %d: %v", lock.Kind, r, err)
						return
					}
					c.inside(kind, lock.Kind, h)
					if err := h.Release(); err != nil {
						c.report("%v round %d: release: %v", lock.Kind, r, err)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	c.verdict(t, kind)
	e.checkClean(kind, "excl")
}

// report records a failure without ever blocking a holder (one that
// blocked inside would keep the others out): past the channel's room, the
// first ones tell enough.
func (c *critical) report(format string, args ...any) {
	select {
	case c.errs <- fmt.Errorf(format, args...):
	default:
	}
}

// inside is one holder's stay in the critical section.
func (c *critical) inside(kind, as runtime.Kind, h *runtime.Held) {
	if as == runtime.Read {
		c.readers.Add(1)
		if w := c.holders.Load(); w != 0 {
			c.report("a reader inside with %d writers", w)
		}
		defer c.readers.Add(-1)
	} else {
		n := c.holders.Add(1)
		if r := c.readers.Load(); r != 0 {
			c.report("a writer inside with %d readers", r)
		}
		defer c.holders.Add(-1)
		// CAS, so that a smaller count stored late cannot hide an overlap.
		for m := c.most.Load(); n > m && !c.most.CompareAndSwap(m, n); m = c.most.Load() {
		}
	}
	if exclusive(as) {
		fence, _ := runtime.Fence(h.Context())
		if last := c.lastFence.Load(); fence <= last {
			c.report("fence %d not above the previous holder's %d", fence, last)
		}
		c.lastFence.Store(fence)
		v := c.counter.Load()
		time.Sleep(time.Millisecond) // widen the window a second holder would need
		c.counter.Store(v + 1)
		c.done.Add(1)
	} else {
		time.Sleep(time.Millisecond)
	}
}

// verdict fails t for what the holders reported and what the counts show.
func (c *critical) verdict(t *testing.T, kind runtime.Kind) {
	t.Helper()
	close(c.errs)
	for err := range c.errs {
		t.Error(err)
	}
	if got, want := c.counter.Load(), c.done.Load(); got != want {
		t.Errorf("counter %d after %d increments under the lock: %d lost", got, want, want-got)
	}
	most := int32(1)
	if kind == runtime.Semaphore {
		most = 2
	}
	if c.most.Load() > most {
		t.Errorf("%d exclusive holders (or semaphore permits) at once, want at most %d", c.most.Load(), most)
	}
}
