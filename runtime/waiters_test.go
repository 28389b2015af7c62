package runtime_test

import (
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/lockgen/lockgen/runtime"
)

// eventLog records the kind and holder of every event of a Locker, in the
// order they happened, and signals busy replies.
type eventLog struct {
	mu     sync.Mutex
	events []runtime.Event
	busy   chan struct{}
}

func newEventLog() *eventLog { return &eventLog{busy: make(chan struct{}, 64)} }

func (e *eventLog) observe(ev runtime.Event) {
	e.mu.Lock()
	e.events = append(e.events, ev)
	e.mu.Unlock()
	if ev.Kind == runtime.EventBusy {
		select {
		case e.busy <- struct{}{}:
		default:
		}
	}
}

// first returns the first event matching and its index, or index -1.
func (e *eventLog) first(match func(runtime.Event) bool) (runtime.Event, int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, ev := range e.events {
		if match(ev) {
			return ev, i
		}
	}
	return runtime.Event{}, -1
}

func isKind(k runtime.EventKind) func(runtime.Event) bool {
	return func(e runtime.Event) bool { return e.Kind == k }
}

// A holder that asks again right after its release does not barge in ahead
// of a mutex waiter of its own process: it queues behind it in the process
// and sends nothing to Redis before that waiter has the lock.
func TestMutexHolderAskingAgainQueuesBehindItsProcess(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		for round := range 3 {
			log := newEventLog()
			l := tg.newLocker(t, runtime.WithObserver(log.observe))
			ctx := ctxTimeout(t, 10*time.Second)
			lock := runtime.Lock{Kind: runtime.Mutex, Key: "nobarge:" + strconv.Itoa(round), Lease: 30 * time.Second}
			h, err := l.Acquire(ctx, lock)
			if err != nil {
				t.Fatal(err)
			}
			first, _ := log.first(isKind(runtime.EventAcquired))
			holder := first.Holder
			got := acquireAsync(ctx, l, lock)
			waitBusy(t, log.busy, 2) // attempt, subscribe, attempt: it sleeps
			busy, _ := log.first(isKind(runtime.EventBusy))
			waiter := busy.Holder

			if err := h.Release(); err != nil {
				t.Fatal(err)
			}
			again := acquireAsync(ctx, l, lock)
			a := <-got
			if a.err != nil {
				t.Fatalf("waiter: %v", a.err)
			}
			if err := a.h.Release(); err != nil {
				t.Fatal(err)
			}
			b := <-again
			if b.err != nil {
				t.Fatalf("holder asking again: %v", b.err)
			}
			if err := b.h.Release(); err != nil {
				t.Fatal(err)
			}
			_, waiterGranted := log.first(func(e runtime.Event) bool { return e.Kind == runtime.EventAcquired && e.Holder == waiter })
			barged, askedAgain := log.first(func(e runtime.Event) bool { return e.Holder != holder && e.Holder != waiter })
			if waiterGranted < 0 || askedAgain < 0 {
				t.Fatalf("round %d: no grant event of the waiter (%d) or no event of the holder asking again (%d)", round, waiterGranted, askedAgain)
			}
			if askedAgain < waiterGranted {
				t.Fatalf("round %d: the holder asking again had a %v event (#%d) before the waiter's grant (#%d): it barged in",
					round, barged.Kind, askedAgain, waiterGranted)
			}
		}
	})
}
