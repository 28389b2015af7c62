package callbound

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A shared deadline is always between 7/8 of its bound and the bound
// ahead of the caller's clock reading, is renewed once less is left, and
// its Done closes when it passes, not before.
func TestBoundStaysWithinItsBound(t *testing.T) {
	const d = 400 * time.Millisecond
	b := &Bound{D: d}
	now := time.Now()
	first := b.Get(now)
	if left := first.At.Sub(now); left < d-d/8 || left > d {
		t.Fatalf("a new deadline is %v ahead, want %v..%v", left, d-d/8, d)
	}
	if again := b.Get(now.Add(d / 16)); again != first {
		t.Errorf("a deadline with more than 7/8 of the bound left was replaced")
	}
	later := now.Add(d/8 + time.Millisecond)
	second := b.Get(later)
	if second == first {
		t.Fatalf("a deadline with less than 7/8 of the bound left was handed out again")
	}
	if left := second.At.Sub(later); left != d {
		t.Errorf("the renewed deadline is %v ahead, want %v", left, d)
	}
	select {
	case <-first.done:
		if time.Now().Before(first.At) {
			t.Errorf("the shared deadline's Done closed before the deadline")
		}
	case <-time.After(d + 10*time.Second): // generous: a busy machine delays timers
		t.Fatalf("the shared deadline's Done did not close after the deadline")
	}
}

// A shared deadline that has passed ends its contexts with
// DeadlineExceeded, and contexts derived from them with it.
func TestCtxEndsAtItsDeadline(t *testing.T) {
	b := &Bound{D: 50 * time.Millisecond}
	ctx := new(Ctx).Bind(context.Background(), b.Get(time.Now()))
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

// Handing out the current deadline and binding it to a context allocate
// nothing: that is what the package is for.
func TestCurrentAndBindAllocateNothing(t *testing.T) {
	b := &Bound{D: time.Hour}
	b.Current() // the first deadline is made once
	var c Ctx
	values := context.Background()
	if n := testing.AllocsPerRun(100, func() {
		ctx := c.Bind(values, b.Current())
		if _, ok := ctx.Deadline(); !ok || ctx.Err() != nil {
			t.Fatal("a bound context without its deadline, or already ended")
		}
	}); n != 0 {
		t.Errorf("%v allocations per Current and Bind, want 0", n)
	}
}
