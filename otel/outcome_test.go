package lockotel

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/lockgen/lockgen/runtime"
)

// Each way an acquire or a hold can end has its outcome; a wrapped error
// is read through its wrapping, as the runtime wraps every error.
func TestOutcomes(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("lockgen: acquire mutex \"k\": %w", err) }
	acquires := []struct {
		e    runtime.Event
		want string
	}{
		{runtime.Event{Kind: runtime.EventAcquired}, outcomeAcquired},
		{runtime.Event{Kind: runtime.EventGaveUp, Err: wrap(runtime.ErrNotAcquired)}, outcomeBusy},
		{runtime.Event{Kind: runtime.EventGaveUp, Err: wrap(context.Canceled)}, outcomeCanceled},
		{runtime.Event{Kind: runtime.EventGaveUp, Err: wrap(context.DeadlineExceeded)}, outcomeTimeout},
		{runtime.Event{Kind: runtime.EventGaveUp, Err: wrap(runtime.ErrClosed)}, outcomeError},
		{runtime.Event{Kind: runtime.EventGaveUp, Err: errors.New("ERR some redis error")}, outcomeError},
	}
	for _, c := range acquires {
		if got := acquireOutcome(c.e); got != c.want {
			t.Errorf("acquire %v (%v): outcome %q, want %q", c.e.Kind, c.e.Err, got, c.want)
		}
	}
	releases := []struct {
		err  error
		want string
	}{
		{nil, outcomeReleased},
		{fmt.Errorf("%w: release mutex \"k\": expired or taken over", runtime.ErrNotHeld), outcomeLost},
		{fmt.Errorf("%w: release: %w", runtime.ErrNotHeld, runtime.ErrLockLost), outcomeLost},
		{errors.New("lockgen: release mutex \"k\": i/o timeout (retrying in the background)"), outcomeError},
	}
	for _, c := range releases {
		if got := releaseOutcome(runtime.Event{Kind: runtime.EventReleased, Err: c.err}); got != c.want {
			t.Errorf("release (%v): outcome %q, want %q", c.err, got, c.want)
		}
	}
}
