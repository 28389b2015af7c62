package callqueue

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/internal/callerr"
)

// busyCoalescer returns a Coalescer over f with every round trip under way
// (DefaultMaxFlights direct calls by "busy0".."busyN", each blocked until f.finish
// lets it end), so that the next call queues.
func busyCoalescer(t *testing.T, f *fakeRoundTrips) *Coalescer {
	t.Helper()
	co := New(f.runDirect, f.runBatch)
	for i := 0; i < DefaultMaxFlights; i++ {
		go co.eval(context.Background(), callBy(fmt.Sprint("busy", i)))
		<-f.started
	}
	return co
}

// A call with a deadline that would go out at once is not taken: the
// caller runs it on a goroutine of its own, as before.
func TestEvalWithinLeavesALoneCallToTheCaller(t *testing.T) {
	f := newFakeRoundTrips()
	co := New(f.runDirect, f.runBatch)
	_, _, _, queued := co.EvalWithin(context.Background(), callBy("a"), time.Now().Add(time.Second))
	if queued || f.direct != 0 {
		t.Fatalf("queued %v, direct calls %d: a call that would go out at once must be left to its caller", queued, f.direct)
	}
}

// A queued call whose deadline passes before it is sent is taken out and
// never sent; its caller returns at the deadline with a finished pending.
func TestEvalWithinGivesUpBeforeItIsSent(t *testing.T) {
	f := newFakeRoundTrips()
	co := busyCoalescer(t, f)
	start := time.Now()
	_, p, err, queued := co.EvalWithin(context.Background(), callBy("late"), start.Add(30*time.Millisecond))
	if !queued || !errors.Is(err, callerr.ErrNoReply) {
		t.Fatalf("queued %v, err %v; want queued, callerr.ErrNoReply", queued, err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("returned after %v, want about the 30ms deadline", took)
	}
	select {
	case <-p.Done:
	default:
		t.Fatal("a call never sent left a pending that is not done")
	}
	waitQueued(t, co, 0)
	for i := 0; i < DefaultMaxFlights; i++ {
		f.finish <- struct{}{}
	}
	waitFlights(t, co, 0)
	if len(f.batches) != 0 || f.direct != DefaultMaxFlights {
		t.Fatalf("batches %v, direct %d: the call taken out was sent", f.batches, f.direct)
	}
}

// Queued calls with deadlines share one pipeline and each gets its own
// reply; the pipeline goes out on a goroutine of its own, so its first
// call's caller could still give up.
func TestEvalWithinSharesAPipeline(t *testing.T) {
	f := newFakeRoundTrips()
	co := busyCoalescer(t, f)
	type result struct {
		holder string
		v      any
		err    error
	}
	results := make(chan result, 8)
	queued := []string{"x", "y", "z"}
	for _, h := range queued {
		go func() {
			v, p, err, _ := co.EvalWithin(context.Background(), callBy(h), time.Now().Add(time.Minute))
			<-p.Done
			results <- result{h, v, err}
		}()
	}
	waitQueued(t, co, len(queued))
	f.finish <- struct{}{} // a round trip ends: the queue becomes a batch
	if got := <-f.started; got != "batch" {
		t.Fatalf("after a round trip ended: %s, want the queued calls as one batch", got)
	}
	for i := 0; i < DefaultMaxFlights; i++ {
		f.finish <- struct{}{}
	}
	for range queued {
		r := <-results
		if r.err != nil || r.v != "reply:"+r.holder {
			t.Errorf("%s got %v, %v; want its own reply", r.holder, r.v, r.err)
		}
	}
	if len(f.batches) != 1 || len(f.batches[0]) != len(queued) {
		t.Errorf("batches %v, want one of the %d queued calls", f.batches, len(queued))
	}
}

// A caller that gives up after its call was sent returns at its deadline
// with callerr.ErrNoReply and a pending that ends with the pipeline; the others of
// the batch, and the batch itself, are unaffected, even when the caller
// that gave up was the one to send it.
func TestEvalWithinGivesUpAfterItIsSent(t *testing.T) {
	for _, lead := range []bool{true, false} {
		t.Run(fmt.Sprint("lead=", lead), func(t *testing.T) {
			f := newFakeRoundTrips()
			co := busyCoalescer(t, f)
			type outcome struct {
				v   any
				p   *Pending
				err error
			}
			gaveUp := make(chan outcome, 1)
			stayed := make(chan outcome, 1)
			ctx, cancel := context.WithCancel(context.Background())
			quitter := func() {
				v, p, err, _ := co.EvalWithin(ctx, callBy("quitter"), time.Time{})
				gaveUp <- outcome{v, p, err}
			}
			stayer := func() {
				v, p, err, _ := co.EvalWithin(context.Background(), callBy("stayer"), time.Time{})
				stayed <- outcome{v, p, err}
			}
			first, second := stayer, quitter
			if lead {
				first, second = quitter, stayer
			}
			go first()
			waitQueued(t, co, 1)
			go second()
			waitQueued(t, co, 2)
			f.finish <- struct{}{}
			if got := <-f.started; got != "batch" {
				t.Fatalf("got %s, want a batch", got)
			}
			cancel() // the pipeline is under way: the quitter stops waiting
			q := <-gaveUp
			if !errors.Is(q.err, callerr.ErrNoReply) {
				t.Fatalf("quitter: %v, want callerr.ErrNoReply", q.err)
			}
			select {
			case <-q.p.Done:
				t.Fatal("the quitter's pending is done while its pipeline is still under way")
			default:
			}
			for i := 0; i < DefaultMaxFlights; i++ {
				f.finish <- struct{}{}
			}
			s := <-stayed
			if s.err != nil || s.v != "reply:stayer" {
				t.Fatalf("stayer: %v, %v; want its reply", s.v, s.err)
			}
			select {
			case <-q.p.Done:
				if q.p.Err != nil {
					t.Fatalf("quitter's pending ended with %v, want nil (its reply came)", q.p.Err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the quitter's pending never ended after its pipeline did")
			}
			waitFlights(t, co, 0)
		})
	}
}

// Under many goroutines, some giving up before and some after their call
// is sent, every call gets its own reply or gives up with a pending that
// ends; every call sent is accounted for (a reply, or a caller that gave
// up after it was sent), so none taken out of the queue was sent; and the
// Coalescer ends with nothing under way.
func TestEvalWithinUnderLoad(t *testing.T) {
	var sent atomic.Int64
	direct := func(ctx context.Context, c backend.Call) (any, error) {
		sent.Add(1)
		time.Sleep(100 * time.Microsecond)
		return "reply:" + c.Args[0], nil
	}
	batch := func(ctx context.Context, calls []backend.Call) []backend.Reply {
		sent.Add(int64(len(calls)))
		time.Sleep(100 * time.Microsecond)
		out := make([]backend.Reply, len(calls))
		for i, c := range calls {
			out[i] = backend.Reply{Value: "reply:" + c.Args[0]}
		}
		return out
	}
	co := New(direct, batch)
	const goroutines, calls = 32, 200
	errs := make(chan error, goroutines)
	var gaveUp, gaveUpAfterSent, replied, viaQueue atomic.Int64
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range calls {
				holder := fmt.Sprint(g, ":", i)
				deadline := time.Now().Add(time.Minute)
				if i%5 == 0 {
					deadline = time.Now().Add(time.Duration(i%3) * 50 * time.Microsecond)
				}
				v, p, err, queued := co.EvalWithin(context.Background(), callBy(holder), deadline)
				if !queued {
					v, err = co.eval(context.Background(), callBy(holder))
					p = Finished(err)
				} else {
					viaQueue.Add(1)
				}
				switch {
				case errors.Is(err, callerr.ErrNoReply):
					gaveUp.Add(1)
					if p != NeverSent { // the pending of a call never sent is the shared finished one
						gaveUpAfterSent.Add(1)
					}
					select {
					case <-p.Done:
					case <-time.After(10 * time.Second):
						errs <- fmt.Errorf("%s: pending never ended", holder)
						return
					}
				case err != nil:
					errs <- err
					return
				case v != "reply:"+holder:
					errs <- fmt.Errorf("%s got %v", holder, v)
					return
				default:
					replied.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if viaQueue.Load() == 0 || gaveUp.Load() == 0 {
		t.Errorf("%d calls queued, %d gave up: the test did not exercise both", viaQueue.Load(), gaveUp.Load())
	}
	if got, want := sent.Load(), replied.Load()+gaveUpAfterSent.Load(); got != want {
		t.Errorf("%d calls sent, want %d: %d replied, %d gave up after they were sent", got, want, replied.Load(), gaveUpAfterSent.Load())
	}
	co.mu.Lock()
	defer co.mu.Unlock()
	if co.flights != 0 || len(co.queue) != 0 {
		t.Errorf("after every call returned: %d round trips under way, %d calls queued", co.flights, len(co.queue))
	}
}
