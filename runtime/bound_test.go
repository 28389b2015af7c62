package runtime

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockgen/lockgen/internal/callqueue"
)

type boundTestKey struct{}

// A bounded context keeps the caller's values, not its cancellation, and
// reports its own deadline and error, also to context.Cause; a bound the
// Locker shares nothing for gets a context of its own.
func TestBoundedContextDetachesFromItsCaller(t *testing.T) {
	l := &Locker{}
	l.releaseBound.D, l.leaseBound.D = time.Hour, 2*time.Hour
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
