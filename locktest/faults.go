package locktest

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/lockgen/lockgen/backend"
)

// faultBackend is the embedded backend with the faults a test switches on:
// a stall (every call waits until it is lifted or its context ends) and
// failing acquires.
type faultBackend struct {
	inner backend.Backend

	mu          sync.Mutex
	stalled     chan struct{} // non-nil while stalled; closed to resume
	acquireFail error         // non-nil: acquire scripts fail with it
}

var _ backend.Backend = (*faultBackend)(nil)

// stall makes calls wait; it returns the function that lets them go, which
// may be called more than once.
func (f *faultBackend) stall() (resume func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stalled == nil {
		f.stalled = make(chan struct{})
	}
	ch := f.stalled
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.stalled == ch { // not yet resumed, nor stalled anew since
			close(ch)
			f.stalled = nil
		}
	}
}

// resumeAll lets every stalled call go.
func (f *faultBackend) resumeAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stalled != nil {
		close(f.stalled)
		f.stalled = nil
	}
}

func (f *faultBackend) isStalled() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stalled != nil
}

// pass waits while the backend is stalled; it returns ctx's error if ctx
// ends first.
func (f *faultBackend) pass(ctx context.Context) error {
	f.mu.Lock()
	ch := f.stalled
	f.mu.Unlock()
	if ch == nil {
		return ctx.Err()
	}
	select {
	case <-ch:
		return ctx.Err()
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (f *faultBackend) setAcquireFailure(err error) {
	f.mu.Lock()
	f.acquireFail = err
	f.mu.Unlock()
}

// injected is the error c fails with, or nil if c may run.
func (f *faultBackend) injected(c backend.Call) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.acquireFail != nil && strings.HasSuffix(c.Script.Name, "_acquire") {
		return f.acquireFail
	}
	return nil
}

func (f *faultBackend) Eval(ctx context.Context, c backend.Call) (any, error) {
	if err := f.pass(ctx); err != nil {
		return nil, err
	}
	if err := f.injected(c); err != nil {
		return nil, err
	}
	return f.inner.Eval(ctx, c)
}

func (f *faultBackend) EvalBatch(ctx context.Context, calls []backend.Call) []backend.Reply {
	out := make([]backend.Reply, len(calls))
	if err := f.pass(ctx); err != nil {
		for i := range out {
			out[i].Err = err
		}
		return out
	}
	for i, c := range calls {
		out[i].Value, out[i].Err = f.Eval(ctx, c)
	}
	return out
}

func (f *faultBackend) EvalWait(ctx context.Context, c backend.Call, replicas int, timeout time.Duration) (any, int, error) {
	if err := f.pass(ctx); err != nil {
		return nil, 0, err
	}
	if err := f.injected(c); err != nil {
		return nil, 0, err
	}
	return f.inner.EvalWait(ctx, c, replicas, timeout)
}

func (f *faultBackend) Subscribe(ctx context.Context, channel string, deliver func(payload string)) (func(), error) {
	if err := f.pass(ctx); err != nil {
		return nil, err
	}
	return f.inner.Subscribe(ctx, channel, deliver)
}

func (f *faultBackend) PublishCommand() string { return f.inner.PublishCommand() }

func (f *faultBackend) Close() error { return f.inner.Close() }

// Caps passes on what the inner backend states: injected faults make calls
// fail, never run past their deadlines.
func (f *faultBackend) Caps() backend.Caps { return f.inner.Caps() }
