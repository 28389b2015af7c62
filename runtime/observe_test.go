package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/lockgen/lockgen/runtime"
)

type traceKey struct{}

// ctxLog records every event with the trace value of the context it came
// with, and signals each event kind on a channel of its own.
type ctxLog struct {
	mu     sync.Mutex
	events []runtime.Event
	traces []any
	seen   map[runtime.EventKind]chan runtime.Event
}

func newCtxLog() *ctxLog {
	c := &ctxLog{seen: map[runtime.EventKind]chan runtime.Event{}}
	for k := runtime.EventAcquired; k <= runtime.EventSkipped; k++ {
		c.seen[k] = make(chan runtime.Event, 64)
	}
	return c
}

func (c *ctxLog) observe(ctx context.Context, e runtime.Event) {
	c.mu.Lock()
	c.events = append(c.events, e)
	c.traces = append(c.traces, ctx.Value(traceKey{}))
	c.mu.Unlock()
	select {
	case c.seen[e.Kind] <- e:
	default:
	}
}

// next waits for the next event of kind k.
func (c *ctxLog) next(t *testing.T, k runtime.EventKind) runtime.Event {
	t.Helper()
	select {
	case e := <-c.seen[k]:
		return e
	case <-time.After(20 * time.Second):
		t.Fatalf("no %v event within 20s", k)
		return runtime.Event{}
	}
}

// A ContextObserver gets the context of the Acquire call with every event
// of the lock, the watchdog's renewals and loss too; an Observer added
// alongside still gets every event.
func TestContextObserverGetsTheCallersContext(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		log, plain := newCtxLog(), newCtxLog()
		l := tg.newLocker(t, runtime.WithContextObserver(log.observe), runtime.WithObserver(func(e runtime.Event) { plain.observe(context.Background(), e) }))
		ctx := context.WithValue(ctxTimeout(t, 20*time.Second), traceKey{}, "request-7")
		lock := runtime.Lock{Kind: runtime.Mutex, Key: "victim", Lease: 300 * time.Millisecond, Method: "Svc.Run", Template: "victim"}
		h, err := l.Acquire(ctx, lock)
		if err != nil {
			t.Fatal(err)
		}
		acquired := log.next(t, runtime.EventAcquired)
		if acquired.Lock.Method != "Svc.Run" || acquired.Lock.Template != "victim" {
			t.Errorf("acquired event names %q / %q, want Svc.Run / victim", acquired.Lock.Method, acquired.Lock.Template)
		}
		log.next(t, runtime.EventRenewed)
		if _, err := tg.do(t, "DEL", "@mutex:{victim}"); err != nil {
			t.Fatal(err)
		}
		lost := log.next(t, runtime.EventLost)
		if !errors.Is(lost.Err, runtime.ErrLockLost) {
			t.Errorf("lost event error %v, want ErrLockLost", lost.Err)
		}
		_ = h.Release()
		log.next(t, runtime.EventReleased)
		// The observers of an event are called one after the other, on
		// the goroutine that has it (the watchdog's for a loss): the
		// plain one may get it after the test has moved on.
		for _, k := range []runtime.EventKind{runtime.EventAcquired, runtime.EventRenewed, runtime.EventLost, runtime.EventReleased} {
			plain.next(t, k)
		}

		log.mu.Lock()
		defer log.mu.Unlock()
		for i, e := range log.events {
			if log.traces[i] != "request-7" {
				t.Errorf("%v event came with context value %v, want the caller's request-7", e.Kind, log.traces[i])
			}
		}
	})
}

// Event.Held of a lock handed over after a wait counts from the grant, not
// from the waiter's registration: it is no longer than the time since the
// holder before it started its release.
func TestHeldExcludesTheWaitOfAHandOver(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		for _, kind := range []runtime.Kind{runtime.Fair, runtime.Mutex} {
			t.Run(kind.String(), func(t *testing.T) {
				log := newCtxLog()
				holder := tg.newLocker(t)
				waiter := tg.newLocker(t, runtime.WithContextObserver(log.observe))
				ctx := ctxTimeout(t, 20*time.Second)
				lock := runtime.Lock{Kind: kind, Key: "handover-held:" + kind.String(), Lease: 30 * time.Second}
				first, err := holder.Acquire(ctx, lock)
				if err != nil {
					t.Fatal(err)
				}
				type result struct {
					held *runtime.Held
					err  error
				}
				done := make(chan result, 1)
				go func() {
					h, err := waiter.Acquire(ctx, lock)
					done <- result{h, err}
				}()
				log.next(t, runtime.EventBusy)
				const busyFor = 300 * time.Millisecond
				time.Sleep(busyFor) // the wait that must not count as held
				releasing := time.Now()
				if err := first.Release(); err != nil {
					t.Fatal(err)
				}
				r := <-done
				if r.err != nil {
					t.Fatal(r.err)
				}
				if err := r.held.Release(); err != nil {
					t.Fatal(err)
				}
				bound := time.Since(releasing)
				acquired := log.next(t, runtime.EventAcquired)
				released := log.next(t, runtime.EventReleased)
				if acquired.Waited < busyFor {
					t.Errorf("Waited %v, want at least the %v the lock was busy", acquired.Waited, busyFor)
				}
				if released.Held > bound {
					t.Errorf("Held %v, longer than the %v since the lock was given up to it: it counts the wait", released.Held, bound)
				}
			})
		}
	})
}

// SkipBusy tells a busy error from others, reports EventSkipped with the
// method and the caller's context, and records the skip for TrackSkips on
// the caller's context, not on a context that took a lock since.
func TestSkipBusyIsVisible(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		log := newCtxLog()
		l := tg.newLocker(t, runtime.WithContextObserver(log.observe))
		base := context.WithValue(ctxTimeout(t, 20*time.Second), traceKey{}, "job-run")
		job := runtime.Lock{Kind: runtime.Mutex, Key: "nightly", Wait: runtime.NoWait}
		other, err := l.Acquire(base, job)
		if err != nil {
			t.Fatal(err)
		}
		defer other.Release()

		ctx, skips := runtime.TrackSkips(base)
		if skips.Skipped() {
			t.Fatal("Skipped before any call")
		}
		_, busy := l.Acquire(ctx, job)
		if !l.SkipBusy(ctx, "Jobs.Nightly", busy) {
			t.Fatalf("SkipBusy(%v) = false, want true", busy)
		}
		if !skips.Skipped() || fmt.Sprint(skips.Methods()) != "[Jobs.Nightly]" {
			t.Errorf("Skips: skipped %v, methods %v; want true, [Jobs.Nightly]", skips.Skipped(), skips.Methods())
		}
		e := log.next(t, runtime.EventSkipped)
		if e.Lock.Method != "Jobs.Nightly" || !errors.Is(e.Err, runtime.ErrNotAcquired) {
			t.Errorf("skipped event: method %q err %v", e.Lock.Method, e.Err)
		}
		log.mu.Lock()
		trace := log.traces[len(log.traces)-1]
		log.mu.Unlock()
		if trace != "job-run" {
			t.Errorf("skipped event came with context value %v, want job-run", trace)
		}

		cancelled := fmt.Errorf("lockgen: waiting: %w", context.Canceled)
		if l.SkipBusy(ctx, "Jobs.Nightly", cancelled) || l.SkipBusy(ctx, "Jobs.Nightly", nil) {
			t.Error("SkipBusy took a cancellation or nil for a busy lock")
		}

		// A method that ran, and whose nested call was skipped, ran.
		ctx2, outerSkips := runtime.TrackSkips(base)
		outer, err := l.Acquire(ctx2, runtime.Lock{Kind: runtime.Mutex, Key: "outer"})
		if err != nil {
			t.Fatal(err)
		}
		innerCtx, innerSkips := runtime.TrackSkips(outer.Context())
		_, busy = l.Acquire(innerCtx, job)
		l.SkipBusy(innerCtx, "Jobs.Nightly", busy)
		_ = outer.Release()
		if outerSkips.Skipped() || !innerSkips.Skipped() {
			t.Errorf("nested skip: outer Skipped %v (want false: its call ran), inner %v (want true)", outerSkips.Skipped(), innerSkips.Skipped())
		}
		if n := len(skips.Methods()); n != 1 {
			t.Errorf("first tracker saw %d skips, want 1", n)
		}
	})
}

// A re-entry reports neither its acquire nor its release: each hold in
// Redis is one EventAcquired and one EventReleased, whichever of the
// chain's Helds lets go last.
func TestReentryReportsOneAcquireAndOneRelease(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		for _, outerFirst := range []bool{true, false} {
			log := newCtxLog()
			l := tg.newLocker(t, runtime.WithContextObserver(log.observe))
			lock := runtime.Lock{Kind: runtime.Mutex, Key: fmt.Sprintf("reentry-events:%v", outerFirst)}
			outer, err := l.Acquire(ctxTimeout(t, 20*time.Second), lock)
			if err != nil {
				t.Fatal(err)
			}
			inner, err := l.Acquire(outer.Context(), lock)
			if err != nil {
				t.Fatal(err)
			}
			first, last := inner, outer
			if outerFirst {
				first, last = outer, inner
			}
			if err := first.Release(); err != nil {
				t.Fatal(err)
			}
			if err := last.Release(); err != nil {
				t.Fatal(err)
			}
			counts := map[runtime.EventKind]int{}
			log.mu.Lock()
			for _, e := range log.events {
				counts[e.Kind]++
			}
			log.mu.Unlock()
			if counts[runtime.EventAcquired] != 1 || counts[runtime.EventReleased] != 1 {
				t.Errorf("outer released first %v: %d acquired, %d released events; want 1 and 1", outerFirst, counts[runtime.EventAcquired], counts[runtime.EventReleased])
			}
		}
	})
}
