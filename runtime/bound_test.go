package runtime

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockgen/lockgen/internal/callqueue"
)

// A shared deadline is always between 7/8 of its bound and the bound
// ahead of the caller's clock reading, is renewed once less is left, and
// its Done closes when it passes, not before.
func TestSharedBoundStaysWithinItsBound(t *testing.T) {
	const d = 400 * time.Millisecond
	b := &sharedBound{d: d}
	now := time.Now()
	first := b.get(now)
	if left := first.at.Sub(now); left < d-d/8 || left > d {
		t.Fatalf("a new deadline is %v ahead, want %v..%v", left, d-d/8, d)
	}
	if again := b.get(now.Add(d / 16)); again != first {
		t.Errorf("a deadline with more than 7/8 of the bound left was replaced")
	}
	later := now.Add(d/8 + time.Millisecond)
	second := b.get(later)
	if second == first {
		t.Fatalf("a deadline with less than 7/8 of the bound left was handed out again")
	}
	if left := second.at.Sub(later); left != d {
		t.Errorf("the renewed deadline is %v ahead, want %v", left, d)
	}
	select {
	case <-first.done:
		if time.Now().Before(first.at) {
			t.Errorf("the shared deadline's Done closed before the deadline")
		}
	case <-time.After(d + 10*time.Second): // generous: a busy machine delays timers
		t.Fatalf("the shared deadline's Done did not close after the deadline")
	}
}

type boundTestKey struct{}

// A bounded context keeps the caller's values, not its cancellation, and
// reports its own deadline and error, also to context.Cause; a bound the
// Locker shares nothing for gets a context of its own.
func TestBoundedContextDetachesFromItsCaller(t *testing.T) {
	l := &Locker{}
	l.releaseBound.d, l.leaseBound.d = time.Hour, 2*time.Hour
	caller, cancelCaller := context.WithCancelCause(context.WithValue(context.Background(), boundTestKey{}, "v"))
	defer cancelCaller(nil)
	for _, d := range []time.Duration{time.Hour, 2 * time.Hour, 3 * time.Hour} {
		var st boundedCtx
		now := time.Now()
		ctx, cancel := l.boundedContext(callqueue.Detach(caller), now, d, &st)
		shared := ctx == context.Context(&st)
		if shared != (d != 3*time.Hour) {
			t.Errorf("bound %v: shared %v", d, shared)
		}
		cancelCaller(errors.New("the caller is done"))
		if err := ctx.Err(); err != nil {
			t.Errorf("bound %v: the caller's cancellation reached the bounded context: %v", d, err)
		}
		if err := context.Cause(ctx); err != nil {
			t.Errorf("bound %v: context.Cause reports %v for a context that is not done", d, err)
		}
		if v := ctx.Value(boundTestKey{}); v != "v" {
			t.Errorf("bound %v: the caller's value is %v, want v", d, v)
		}
		if dl, ok := ctx.Deadline(); !ok || dl.Sub(now) < d-d/8 || dl.Sub(now) > d {
			t.Errorf("bound %v: deadline %v ahead (%v), want %v..%v", d, dl.Sub(now), ok, d-d/8, d)
		}
		cancel()
	}
}

// A shared deadline that has passed ends its contexts with
// DeadlineExceeded, and contexts derived from them with it.
func TestBoundedContextEndsAtItsDeadline(t *testing.T) {
	b := &sharedBound{d: 50 * time.Millisecond}
	ctx := &boundedCtx{Context: context.Background(), dl: b.get(time.Now())}
	child, cancel := context.WithCancel(ctx)
	defer cancel()
	select {
	case <-child.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("a context derived from a bounded one did not end at its deadline")
	}
	if err := ctx.Err(); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Err after the deadline: %v, want DeadlineExceeded", err)
	}
	if err := context.Cause(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Cause after the deadline: %v, want DeadlineExceeded", err)
	}
}
