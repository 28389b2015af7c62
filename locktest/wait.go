package locktest

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/lockgen/lockgen/runtime"
)

// grants tells WaitHeld that l's Locker granted a lock: an Observer the
// Locker was built with closes the current channel on every EventAcquired,
// and the next waiter takes a fresh one.
type grants struct {
	mu sync.Mutex
	ch chan struct{}
}

// observe is the Locker's Observer. It only closes a channel: an Observer
// must be quick and must not call the Locker.
func (g *grants) observe(e runtime.Event) {
	if e.Kind != runtime.EventAcquired {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ch != nil {
		close(g.ch)
		g.ch = nil
	}
}

// next returns a channel closed at the next grant after this call.
func (g *grants) next() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ch == nil {
		g.ch = make(chan struct{})
	}
	return g.ch
}

// Pacing of WaitHeld's look at the server when no grant of l wakes it: a
// holder outside l (another Locker on l.Server(), or Steal's) is seen within
// this much.
const (
	waitHeldPollMin = time.Millisecond
	waitHeldPollMax = 50 * time.Millisecond
)

// WaitHeld waits until lock has a holder, and returns what the server holds
// for it then (LockState.Holders is not empty). Use it in a test that starts
// the code under test on its own goroutine and must know it holds its lock
// before it calls Expire, Steal or Advance. Only Kind and Key of lock matter,
// as for Inspect.
//
// It looks when l's Locker grants a lock (no polling for the usual case, the
// code under test holding its lock through l), and otherwise every 1 ms to
// 50 ms, for holders outside l. It returns when ctx is done, with an error
// wrapping context.Cause(ctx), or at once with Inspect's error for a
// malformed lock.
func (l *Locker) WaitHeld(ctx context.Context, lock runtime.Lock) (runtime.LockState, error) {
	pause := waitHeldPollMin
	for {
		granted := l.grants.next() // before the look: a grant after it wakes us
		st, err := l.Inspect(ctx, lock)
		if err == nil && len(st.Holders) > 0 {
			return st, nil
		}
		if err != nil && ctx.Err() == nil {
			return st, fmt.Errorf("locktest: WaitHeld: %w", err)
		}
		timer := time.NewTimer(pause)
		select {
		case <-granted:
		case <-timer.C:
			pause = min(2*pause, waitHeldPollMax)
		case <-ctx.Done():
		}
		timer.Stop()
		if ctx.Err() != nil {
			return st, fmt.Errorf("locktest: %s %q not held: %w", lock.Kind, lock.Key, context.Cause(ctx))
		}
	}
}
