package harness

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/lockgen/lockgen/bench/peers"
)

// The hot-key workload runs its goroutines in two processes, so that
// handoffs cross process boundaries as they do in a fleet. The harness
// re-executes its own binary with childEnv set to a JSON childSpec; the child
// talks to its parent over stdin/stdout:
//
//	child → parent  "ready\n"                  connected and warmed up
//	parent → child  "<start> <end>\n"          wall-clock Unix nanoseconds
//	child → parent  one JSON childReport line  after end, when all are done
//
// Wall-clock time (time.Now().UnixNano()) is shared by processes on one
// machine; monotonic readings are not, so grants are stamped with it.
const childEnv = "LOCKBENCH_CHILD"

type childSpec struct {
	Mode       string // "" for a hot-key worker, idleChildMode for idle waiters
	Addr       string
	Peer       string
	Proc       int
	Goroutines int
	Hold       time.Duration
	Key        string
	First      int           // idle waiters: the first key index of this process
	Lease      time.Duration // idle waiters: the lease they ask for
}

// grant is one lock request. Acq is 0 when the request was still waiting
// when the run ended (unserved) or failed with an error (Failed).
type grant struct {
	Proc, G       int
	Req, Acq, Rel int64 // Unix ns: Lock called, Lock returned, Unlock called
	Failed        bool
}

type childReport struct {
	Grants []grant
	Counts peers.Counts // sent between start and the end of the last release
	Errors int
	Error  string // the first error, if any
	// Acquired counts idle waiters that got their lock (workload 8): a
	// holder lost its lock, and the measure is void.
	Acquired int `json:",omitempty"`
}

// RunChildIfAsked turns the process into a hot-key worker when the parent
// harness started it as one, and then exits. Call it first in main (and in
// TestMain): it returns at once in a normal run.
func RunChildIfAsked() {
	raw, ok := os.LookupEnv(childEnv)
	if !ok {
		return
	}
	var spec childSpec
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		fmt.Fprintf(os.Stderr, "lockbench child: bad %s: %v\n", childEnv, err)
		os.Exit(2)
	}
	run := runChild
	if spec.Mode == idleChildMode {
		run = runIdleChild
	}
	if err := run(spec, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "lockbench child %d: %v\n", spec.Proc, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// childReadyTimeout bounds connecting and warming up.
const childReadyTimeout = 30 * time.Second

// openReady opens the child's client of spec.Peer with cfg, warms it up
// and tells the parent "ready", which waits for every child before it sends
// the start line. The caller closes the client.
func openReady(spec childSpec, cfg peers.Config, out io.Writer) (peers.Client, error) {
	p, ok := peers.ByName(spec.Peer)
	if !ok {
		return nil, fmt.Errorf("unknown peer %q", spec.Peer)
	}
	c, err := p.Open(cfg)
	if err != nil {
		return nil, err
	}
	if err := warmUp(c, spec.Proc); err == nil {
		_, err = fmt.Fprintln(out, "ready")
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func runChild(spec childSpec, in io.Reader, out io.Writer) error {
	c, err := openReady(spec, peers.Config{Addr: spec.Addr}, out)
	if err != nil {
		return err
	}
	defer c.Close()
	start, end, err := readStartLine(in)
	if err != nil {
		return err
	}
	time.Sleep(time.Until(time.Unix(0, start)))
	before := c.Counts()

	var (
		mu     sync.Mutex
		rep    childReport
		wg     sync.WaitGroup
		endAt  = time.Unix(0, end)
		record = func(g grant, err error) {
			mu.Lock()
			defer mu.Unlock()
			rep.Grants = append(rep.Grants, g)
			if err != nil {
				rep.Errors++
				if rep.Error == "" {
					rep.Error = err.Error()
				}
			}
		}
	)
	for g := 0; g < spec.Goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hotKeyLoop(c, spec, g, endAt, record)
		}()
	}
	wg.Wait()
	after := c.Counts()
	rep.Counts = peers.Counts{Calls: after.Calls - before.Calls, Commands: after.Commands - before.Commands}
	return json.NewEncoder(out).Encode(rep)
}

// warmUp takes and releases a key of process proc's own a few times:
// connections, scripts, subscriptions.
func warmUp(c peers.Client, proc int) error {
	ctx, cancel := context.WithTimeout(context.Background(), childReadyTimeout)
	defer cancel()
	for i := 0; i < 3; i++ {
		h, err := c.Lock(ctx, fmt.Sprintf("warm:%d", proc))
		if err == nil {
			err = h.Unlock(ctx)
		}
		if err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
	}
	return nil
}

// readStartLine reads the parent's "<start> <end>" line.
func readStartLine(in io.Reader) (start, end int64, err error) {
	if _, err := fmt.Fscanf(bufio.NewReader(in), "%d %d\n", &start, &end); err != nil {
		return 0, 0, fmt.Errorf("reading start line: %w", err)
	}
	return start, end, nil
}

// releaseTimeout bounds one Unlock.
const releaseTimeout = 5 * time.Second

// hotKeyLoop requests the hot key, holds it for spec.Hold, releases it and
// asks again, until endAt. Waiting is bounded by endAt.
func hotKeyLoop(c peers.Client, spec childSpec, g int, endAt time.Time, record func(grant, error)) {
	for time.Now().Before(endAt) {
		// The context must outlive the hold: rueidislock gives the lock up
		// when the context it was taken with ends.
		ctx, cancel := context.WithDeadline(context.Background(), endAt)
		gr := grant{Proc: spec.Proc, G: g, Req: time.Now().UnixNano()}
		h, err := c.Lock(ctx, spec.Key)
		if err != nil {
			cancel()
			if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
				record(gr, nil) // still waiting at the end: unserved
				return
			}
			gr.Failed = true
			record(gr, err)
			continue
		}
		gr.Acq = time.Now().UnixNano()
		time.Sleep(spec.Hold)
		gr.Rel = time.Now().UnixNano()
		rctx, rcancel := context.WithTimeout(context.Background(), releaseTimeout)
		err = h.Unlock(rctx)
		rcancel()
		cancel()
		record(gr, err)
	}
}
