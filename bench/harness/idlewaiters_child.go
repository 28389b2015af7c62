package harness

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/lockgen/lockgen/bench/peers"
)

// idleChildMode makes a worker process one of workload 8's: it runs
// spec.Goroutines waiters, waiter g on idleKey(spec.First+g), which the
// parent's holders hold. The protocol is the hot key's (see child.go):
//
//	child → parent  "ready\n"                  connected and warmed up
//	parent → child  "<wait> <start> <end>\n"   when to start waiting, the window
//	child → parent  one JSON childReport       after end, waiters stopped
//
// The report's Counts are what the waiters' client sent inside the window;
// Acquired counts waiters that got a lock, which must not happen.
const idleChildMode = "idle"

// idleStopDelay is how long after its window's end a worker keeps its
// waiters waiting, so that their withdrawals fall outside the window.
const idleStopDelay = time.Second

func runIdleChild(spec childSpec, in io.Reader, out io.Writer) error {
	c, err := openReady(spec, peers.Config{Addr: spec.Addr, Lease: spec.Lease}, out)
	if err != nil {
		return err
	}
	defer c.Close()
	var waitAt, start, end int64
	if _, err := fmt.Fscanf(bufio.NewReader(in), "%d %d %d\n", &waitAt, &start, &end); err != nil {
		return fmt.Errorf("reading start line: %w", err)
	}
	time.Sleep(time.Until(time.Unix(0, waitAt)))
	ctx, stopWaiting := context.WithCancel(context.Background())
	defer stopWaiting()
	var rep childReport
	done := startIdleWaiters(ctx, c, spec, &rep)
	time.Sleep(time.Until(time.Unix(0, start)))
	before := c.Counts()
	time.Sleep(time.Until(time.Unix(0, end)))
	after := c.Counts()
	// The waiters give up (a withdrawal each) only once the harness has
	// read the server at the window's end: withdrawals that landed inside
	// the window used to add about 0.1/s per waiter to a row.
	time.Sleep(idleStopDelay)
	stopWaiting()
	done()
	rep.Counts = peers.Counts{Calls: after.Calls - before.Calls, Commands: after.Commands - before.Commands}
	return json.NewEncoder(out).Encode(rep)
}

// startIdleWaiters starts spec.Goroutines waiters that wait until ctx ends,
// and returns once each has started; the function it returns waits for
// them all to return. A waiter that gets its lock is counted in
// rep.Acquired and lets the lock go; one that fails otherwise than by ctx
// is counted in rep.Errors.
func startIdleWaiters(ctx context.Context, c peers.Client, spec childSpec, rep *childReport) (wait func()) {
	var mu sync.Mutex
	var started, finished sync.WaitGroup
	for g := range spec.Goroutines {
		started.Add(1)
		finished.Add(1)
		go func() {
			defer finished.Done()
			started.Done()
			h, err := c.Lock(ctx, idleKey(spec.First+g))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				rep.Acquired++
				rctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
				h.Unlock(rctx)
				cancel()
			case ctx.Err() == nil:
				rep.Errors++
				if rep.Error == "" {
					rep.Error = err.Error()
				}
			}
		}()
	}
	started.Wait()
	return finished.Wait
}
