package runtime

import (
	"context"
	"errors"
	"slices"
	"sync"
)

// SkipBusy is what a method annotated onbusy=skip does with an Acquire
// error: it reports whether err says a lock was busy (ErrNotAcquired), and
// if so tells the observers (EventSkipped, with method, "Type.Method") and
// records the skip in the Skips tracking ctx (TrackSkips). The method then returns
// zero values and a nil error without running, as it always has; a caller
// that needs to know whether it ran asks TrackSkips. Any other error
// (cancellation, Redis down) is not a skip: SkipBusy returns false.
func (l *Locker) SkipBusy(ctx context.Context, method string, err error) bool {
	if !errors.Is(err, ErrNotAcquired) {
		return false
	}
	chain := chainOf(ctx)
	for s, _ := ctx.Value(skipsKey{}).(*Skips); s != nil && s.chain == chain; s = s.outer {
		s.add(method)
	}
	l.observe(ctx, Event{Kind: EventSkipped, Lock: Lock{Method: method}, Err: err})
	return true
}

// Skips records the calls skipped under a context made by TrackSkips.
type Skips struct {
	chain *chainLink // the locks held where TrackSkips was called
	outer *Skips     // a TrackSkips further up the context: told too, if no lock was taken since

	mu      sync.Mutex
	methods []string
}

type skipsKey struct{}

// TrackSkips returns a context whose onbusy=skip calls record here whether
// they were skipped, since such a call returns a nil error either way:
//
//	ctx, skips := runtime.TrackSkips(ctx)
//	err := svc.SettleNightly(ctx)
//	if err == nil && skips.Skipped() { ... another instance was running it ... }
//
// The calls made with ctx (or a context derived from it while no lock was
// taken) count; a call nested in a method that ran, made with the context
// the method got, does not: the method ran.
func TrackSkips(ctx context.Context) (context.Context, *Skips) {
	outer, _ := ctx.Value(skipsKey{}).(*Skips)
	s := &Skips{chain: chainOf(ctx), outer: outer}
	return context.WithValue(ctx, skipsKey{}, s), s
}

// Skipped reports whether a call was skipped.
func (s *Skips) Skipped() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.methods) > 0
}

// Methods returns the methods ("Type.Method") of the calls skipped so far,
// in the order they were skipped.
func (s *Skips) Methods() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.methods)
}

func (s *Skips) add(method string) {
	s.mu.Lock()
	s.methods = append(s.methods, method)
	s.mu.Unlock()
}
