package runtime_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/runtime"
)

// freezingBackend stands for a process that is frozen (SIGSTOP, a long GC
// pause, a starved CPU) while it waits: once freeze is called, its calls
// wait at the gate before they are sent, and the messages of its
// subscriptions are held back, until thaw lets the calls go and then
// delivers the messages held.
type freezingBackend struct {
	backend.Backend

	mu      sync.Mutex
	frozen  chan struct{} // nil while not frozen; closed by thaw
	held    []func()
	arrived chan struct{} // a message was held back
}

func (f *freezingBackend) freeze() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.frozen = make(chan struct{})
}

// thaw lets the calls go and returns a func that delivers the messages
// held back (a thawed process reads its socket buffers a little later).
func (f *freezingBackend) thaw() (deliverHeld func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	close(f.frozen)
	f.frozen = nil
	held := f.held
	f.held = nil
	return func() {
		for _, d := range held {
			d()
		}
	}
}

func (f *freezingBackend) gate(ctx context.Context) error {
	f.mu.Lock()
	frozen := f.frozen
	f.mu.Unlock()
	if frozen == nil {
		return nil
	}
	select {
	case <-frozen:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (f *freezingBackend) Eval(ctx context.Context, c backend.Call) (any, error) {
	if err := f.gate(ctx); err != nil {
		return nil, err
	}
	return f.Backend.Eval(ctx, c)
}

func (f *freezingBackend) Subscribe(ctx context.Context, channel string, deliver func(string)) (func(), error) {
	return f.Backend.Subscribe(ctx, channel, func(payload string) {
		f.mu.Lock()
		if f.frozen != nil {
			f.held = append(f.held, func() { deliver(payload) })
			f.mu.Unlock()
			select {
			case f.arrived <- struct{}{}:
			default:
			}
			return
		}
		f.mu.Unlock()
		deliver(payload)
	})
}

// A waiter is offered the lock while it is frozen; the offer lapses, and
// another process takes the lock. The thawed waiter then reads the old
// offer. It must not take that message for a grant: it claims the offer in
// Redis, is told busy, and holds nothing while the other process holds the
// lock. It gets the lock when the other releases, with a higher fence.
// (Protocol 1 took a grant message for a hand-over when it looked recent
// enough, and a message dated from the wrong registration made two
// holders. Protocol 2 dates a message from the waiter's first
// registration, which no offer to it can precede: this one comes more
// than an offer after that, so it is claimed.)
func TestStaleGrantAfterALapsedOfferIsNotAHandOver(t *testing.T) {
	t.Parallel()
	forEachTarget(t, func(t *testing.T, tg target) {
		const offer = 600 * time.Millisecond // the offer's lease and a margin
		lock := runtime.Lock{Kind: runtime.Mutex, Key: "stale-grant", Lease: 10 * time.Second}
		ctx := ctxTimeout(t, 30*time.Second)
		frozen := &freezingBackend{arrived: make(chan struct{}, 1)}
		observe, busy := busySignal()
		waiter := tg.newLockerVia(t, func(b backend.Backend) backend.Backend {
			frozen.Backend = b
			return frozen
		}, runtime.WithObserver(observe))
		first, err := tg.newLocker(t).Acquire(ctx, lock)
		if err != nil {
			t.Fatal(err)
		}
		got := acquireAsync(ctx, waiter, lock)
		waitBusy(t, busy, 2) // registered, and subscribed

		frozen.freeze()
		if err := first.Release(); err != nil {
			t.Fatal(err) // offers the lock to the frozen waiter
		}
		awaitClosedOrSignal(t, frozen.arrived, "the offer")
		other := lock
		other.Wait = 5 * time.Second
		second, err := tg.newLocker(t).Acquire(ctx, other) // once the offer lapsed
		if err != nil {
			t.Fatalf("another process, after the frozen waiter's offer lapsed: %v", err)
		}
		secondFence, _ := runtime.Fence(second.Context())

		drain(busy)
		frozen.thaw()()      // the old offer arrives now
		waitBusy(t, busy, 1) // the thawed waiter claims it: busy

		select {
		case a := <-got:
			fence := int64(0)
			if a.err == nil {
				fence, _ = runtime.Fence(a.h.Context())
			}
			t.Fatalf("the thawed waiter returned (fence %d, err %v) while another process holds the lock (fence %d)", fence, a.err, secondFence)
		case <-time.After(offer):
		}
		if err := second.Release(); err != nil {
			t.Fatal(err)
		}
		a := <-got
		if a.err != nil {
			t.Fatalf("the waiter, after the other process released: %v", a.err)
		}
		defer a.h.Release()
		if fence, _ := runtime.Fence(a.h.Context()); fence <= secondFence {
			t.Errorf("the waiter's fence %d is not above the previous holder's %d", fence, secondFence)
		}
	})
}

// awaitClosedOrSignal waits for a value on ch, at most 5s.
func awaitClosedOrSignal(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s did not arrive within 5s", what)
	}
}
