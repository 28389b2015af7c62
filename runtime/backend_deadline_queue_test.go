package runtime

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/internal/callqueue/queuetest"
	"github.com/lockgen/lockgen/lua"
)

// Over a backend marked HonorsDeadlines, a call whose caller may cancel it
// never waits in a queue, whatever is under way: it runs at once, on its
// own context, so that the cancellation reaches the call itself.
func TestHonorsDeadlinesCancellableCallsRunAlone(t *testing.T) {
	started := make(chan string, 16)
	release := make(chan struct{})
	b := HonorsDeadlines(evalFunc(func(ctx context.Context, c backend.Call) (any, error) {
		started <- c.Args[0]
		select {
		case <-release:
			return int64(1), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}))
	for i := 0; i < maxPipelinedFlights; i++ {
		go b.Eval(context.Background(), callBy("busy"))
		<-started
	}
	// Every round trip is busy: a call that may share one queues.
	go b.Eval(context.Background(), callBy("queued"))
	queuetest.WaitQueued(t, b.(*deadlineHonoringBackend).co, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := b.Eval(ctx, callBy("cancellable")); done <- err }()
	select {
	case h := <-started:
		if h != "cancellable" {
			t.Fatalf("started %s, want the cancellable call", h)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a cancellable call waited for a batch")
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call: %v, want context.Canceled from the call itself", err)
	}
	close(release)
}

// evalFunc is a Backend whose Eval is the function, and EvalBatch runs it
// call by call.
type evalFunc func(ctx context.Context, c backend.Call) (any, error)

func (f evalFunc) Eval(ctx context.Context, c backend.Call) (any, error) { return f(ctx, c) }
func (evalFunc) Caps() backend.Caps                                      { return backend.Caps{} }
func (f evalFunc) EvalBatch(ctx context.Context, calls []backend.Call) []backend.Reply {
	out := make([]backend.Reply, len(calls))
	for i, c := range calls {
		out[i].Value, out[i].Err = f(ctx, c)
	}
	return out
}
func (f evalFunc) EvalWait(ctx context.Context, c backend.Call, replicas int, timeout time.Duration) (any, int, error) {
	v, err := f(ctx, c)
	return v, 0, err
}
func (evalFunc) Subscribe(context.Context, string, func(string)) (func(), error) {
	return func() {}, nil
}
func (evalFunc) PublishCommand() string { return "PUBLISH" }
func (evalFunc) Close() error           { return nil }

// callBy is a call of holder's.
func callBy(holder string) backend.Call {
	return backend.Call{Script: lua.MutexAcquire, Args: []string{holder, "1000", "PUBLISH", "0"}}
}
