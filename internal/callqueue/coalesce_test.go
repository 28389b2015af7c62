package callqueue

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/internal/callerr"
	"github.com/lockgen/lockgen/lua"
)

// fakeRoundTrips stands in for the client: direct calls and batches block
// until the test lets them finish, and every batch sent is recorded.
type fakeRoundTrips struct {
	mu      sync.Mutex
	direct  int
	batches [][]string // the holder (ARGV[1]) of each call, per batch
	started chan string
	finish  chan struct{}
}

func newFakeRoundTrips() *fakeRoundTrips {
	return &fakeRoundTrips{started: make(chan string, 64), finish: make(chan struct{}, 64)}
}

func (f *fakeRoundTrips) runDirect(ctx context.Context, c backend.Call) (any, error) {
	f.mu.Lock()
	f.direct++
	f.mu.Unlock()
	f.started <- "direct:" + c.Args[0]
	<-f.finish
	return "reply:" + c.Args[0], nil
}

func (f *fakeRoundTrips) runBatch(ctx context.Context, calls []backend.Call) []backend.Reply {
	var names []string
	out := make([]backend.Reply, len(calls))
	for i, c := range calls {
		names = append(names, c.Args[0])
		out[i] = backend.Reply{Value: "reply:" + c.Args[0]}
	}
	f.mu.Lock()
	f.batches = append(f.batches, names)
	f.mu.Unlock()
	f.started <- "batch"
	<-f.finish
	return out
}

func callBy(holder string) backend.Call {
	return backend.Call{Script: lua.MutexAcquire, Args: []string{holder, "1000", "PUBLISH", "0"}}
}

// A lone call goes out at once, on its own round trip.
func TestCoalescerSendsALoneCallDirectly(t *testing.T) {
	f := newFakeRoundTrips()
	co := New(f.runDirect, f.runBatch)
	f.finish <- struct{}{}
	v, err := co.eval(context.Background(), callBy("a"))
	if err != nil || v != "reply:a" {
		t.Fatalf("eval = %v, %v", v, err)
	}
	if f.direct != 1 || len(f.batches) != 0 {
		t.Fatalf("direct %d, batches %v; want one direct call", f.direct, f.batches)
	}
}

// With every round trip busy, calls queue and go out together, as one
// pipeline, when the first round trip ends; each gets its own reply.
func TestCoalescerBatchesCallsThatQueue(t *testing.T) {
	f := newFakeRoundTrips()
	co := New(f.runDirect, f.runBatch)
	results := make(chan string, 16)
	run := func(h string) {
		v, err := co.eval(context.Background(), callBy(h))
		if err != nil {
			results <- "error:" + err.Error()
			return
		}
		results <- h + "=" + v.(string)
	}
	for i := 0; i < DefaultMaxFlights; i++ {
		go run(string(rune('a' + i)))
		<-f.started // busy on its round trip
	}
	queued := []string{"x", "y", "z"}
	for _, h := range queued {
		go run(h)
	}
	waitQueued(t, co, len(queued))
	f.finish <- struct{}{} // the first round trip ends: its caller sends the queue
	if got := <-f.started; got != "batch" {
		t.Fatalf("after a round trip ended: %s, want the queued calls as a batch", got)
	}
	// The caller whose round trip ended returns at once: a queued call's
	// goroutine sends the batch, so nobody waits for more than one round
	// trip besides its own.
	seen := map[string]bool{<-results: true}
	for i := 0; i < DefaultMaxFlights; i++ {
		f.finish <- struct{}{}
	}
	for i := 1; i < DefaultMaxFlights+len(queued); i++ {
		seen[<-results] = true
	}
	for _, h := range queued {
		if !seen[h+"=reply:"+h] {
			t.Errorf("%s did not get its own reply: %v", h, seen)
		}
	}
	if len(f.batches) != 1 || len(f.batches[0]) != len(queued) {
		t.Errorf("batches %v, want one of the %d queued calls", f.batches, len(queued))
	}
}

// A queued call whose context ends is taken out and never sent; one that is
// in a pipeline already waits for its reply, so its outcome is final.
func TestCoalescerCancelledCalls(t *testing.T) {
	f := newFakeRoundTrips()
	co := New(f.runDirect, f.runBatch)
	for i := 0; i < DefaultMaxFlights; i++ {
		go co.eval(context.Background(), callBy(string(rune('a'+i))))
		<-f.started
	}
	ctx, cancel := context.WithCancel(context.Background())
	gone := make(chan error, 1)
	go func() { _, err := co.eval(ctx, callBy("gone")); gone <- err }()
	waitQueued(t, co, 1)
	cancel()
	if err := <-gone; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled queued call: %v, want context.Canceled", err)
	}

	ctx2, cancel2 := context.WithCancel(context.Background())
	sent := make(chan any, 1)
	go func() { v, _ := co.eval(ctx2, callBy("sent")); sent <- v }()
	waitQueued(t, co, 1)
	f.finish <- struct{}{} // a round trip ends; the queue, "sent" alone, goes out
	<-f.started            // (a batch of one, on the direct path)
	cancel2()
	select {
	case v := <-sent:
		t.Fatalf("a call in a pipeline returned (%v) before the pipeline ended", v)
	case <-time.After(20 * time.Millisecond):
	}
	// The round trip that carries "sent" and the other direct ones end
	// (any may take any signal).
	for i := 0; i < DefaultMaxFlights; i++ {
		f.finish <- struct{}{}
	}
	if v := <-sent; v != "reply:sent" {
		t.Fatalf("call in the pipeline got %v, want its reply", v)
	}
	for _, b := range f.batches {
		for _, h := range b {
			if h == "gone" {
				t.Fatalf("a call taken out of the queue was sent: %v", f.batches)
			}
		}
	}
}

// waitQueued waits until n calls are queued (bounded).
func waitQueued(t *testing.T, co *Coalescer, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		co.mu.Lock()
		q := len(co.queue)
		co.mu.Unlock()
		if q == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d calls queued, want %d", q, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// Queued calls and their channels are used again by later calls: under
// many goroutines, some of them giving up, every call still gets its own
// reply or its context's error, never another call's.
func TestCoalescerRecycledCallsKeepTheirReplies(t *testing.T) {
	reply := func(c backend.Call) any { return "reply:" + c.Args[0] }
	direct := func(ctx context.Context, c backend.Call) (any, error) {
		time.Sleep(50 * time.Microsecond) // a round trip, during which calls queue
		return reply(c), nil
	}
	var batches atomic.Int64
	batch := func(ctx context.Context, calls []backend.Call) []backend.Reply {
		batches.Add(1)
		out := make([]backend.Reply, len(calls))
		for i, c := range calls {
			out[i] = backend.Reply{Value: reply(c)}
		}
		return out
	}
	co := New(direct, batch)
	const goroutines, calls = 32, 200
	errs := make(chan error, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range calls {
				holder := string(rune('A'+g)) + ":" + time.Duration(i).String()
				ctx, cancel := context.WithCancel(context.Background())
				if i%7 == 0 {
					cancel() // gives up at once if it queues
				}
				v, err := co.eval(ctx, callBy(holder))
				cancel()
				switch {
				case errors.Is(err, context.Canceled) && i%7 == 0:
				case err != nil:
					errs <- err
					return
				case v != "reply:"+holder:
					errs <- errors.New(holder + " got " + v.(string))
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if batches.Load() == 0 {
		t.Error("no call queued: the test did not exercise the queue")
	}
	co.mu.Lock()
	defer co.mu.Unlock()
	if co.flights != 0 || len(co.queue) != 0 {
		t.Errorf("after every call returned: %d round trips under way, %d calls queued", co.flights, len(co.queue))
	}
}

// Over a client that honours deadlines, a batch runs until the earliest
// deadline of its calls. A call whose own deadline has not passed when the
// batch is cut short gets a transient error (its outcome is unknown, as
// after a read timeout), not its caller's deadline.
func TestCoalescerBatchRunsUntilTheEarliestDeadline(t *testing.T) {
	release := make(chan struct{})
	direct := func(ctx context.Context, c backend.Call) (any, error) {
		<-release
		return "reply:" + c.Args[0], nil
	}
	var batchDeadline time.Time
	batch := func(ctx context.Context, calls []backend.Call) []backend.Reply {
		batchDeadline, _ = ctx.Deadline()
		<-ctx.Done() // Redis does not answer
		out := make([]backend.Reply, len(calls))
		for i := range out {
			out[i].Err = ctx.Err()
		}
		return out
	}
	co := New(direct, batch)
	co.Deadlines = true
	for i := 0; i < DefaultMaxFlights; i++ {
		go co.eval(context.Background(), callBy(string(rune('a'+i))))
	}
	waitFlights(t, co, DefaultMaxFlights)
	dl, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	soon := &sharedDeadlineCtx{Context: context.Background(), dl: dl}
	errs := make(chan error, 2)
	go func() { _, err := co.eval(soon, callBy("soon")); errs <- err }()
	waitQueued(t, co, 1)
	go func() { _, err := co.eval(context.Background(), callBy("later")); errs <- err }()
	waitQueued(t, co, 2)
	release <- struct{}{} // a round trip ends: the queue goes out as one batch
	got := []error{<-errs, <-errs}
	var deadline, transient int
	for _, err := range got {
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			deadline++
		case callerr.IsTransient(err):
			transient++
		}
	}
	if deadline != 1 || transient != 1 {
		t.Errorf("errors %v: want the deadline for the call whose deadline it was, a transient error for the other", got)
	}
	if at, _ := soon.Deadline(); !batchDeadline.Equal(at) {
		t.Errorf("batch deadline %v, want the earliest call's, %v", batchDeadline, at)
	}
	close(release)
}

// waitFlights waits until n round trips are under way (bounded).
func waitFlights(t *testing.T, co *Coalescer, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		co.mu.Lock()
		f := co.flights
		co.mu.Unlock()
		if f == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d round trips under way, want %d", f, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// sharedDeadlineCtx is a DeadlineOnly as the runtime's bounded contexts
// are: values never cancelled, and a deadline whose Done it shares.
type sharedDeadlineCtx struct {
	context.Context                 // the values
	dl              context.Context // the shared deadline
}

func (c *sharedDeadlineCtx) Deadline() (time.Time, bool) { return c.dl.Deadline() }
func (c *sharedDeadlineCtx) Done() <-chan struct{}       { return c.dl.Done() }
func (c *sharedDeadlineCtx) Err() error                  { return c.dl.Err() }
func (c *sharedDeadlineCtx) Values() context.Context     { return c.Context }

func (c *sharedDeadlineCtx) WithValues(values context.Context) context.Context {
	return &sharedDeadlineCtx{Context: values, dl: c.dl}
}
