package callqueue

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/lockgen/lockgen/backend"
)

// blockingBackend is a Backend whose calls (Eval, and each call of an
// EvalBatch) say they started on started, then block until release is
// closed or their context ends. It records the holders of each batch.
type blockingBackend struct {
	started chan string
	release chan struct{}
	mu      sync.Mutex
	batches [][]string
}

func newBlockingBackend() *blockingBackend {
	return &blockingBackend{started: make(chan string, 64), release: make(chan struct{})}
}

func (b *blockingBackend) Eval(ctx context.Context, c backend.Call) (any, error) {
	b.started <- c.Args[0]
	select {
	case <-b.release:
		return "reply:" + c.Args[0], nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (b *blockingBackend) EvalBatch(ctx context.Context, calls []backend.Call) []backend.Reply {
	var names []string
	for _, c := range calls {
		names = append(names, c.Args[0])
	}
	b.mu.Lock()
	b.batches = append(b.batches, names)
	b.mu.Unlock()
	out := make([]backend.Reply, len(calls))
	for i, c := range calls {
		out[i].Value, out[i].Err = b.Eval(ctx, c)
	}
	return out
}

func (b *blockingBackend) EvalWait(ctx context.Context, c backend.Call, _ int, _ time.Duration) (any, int, error) {
	v, err := b.Eval(ctx, c)
	return v, 0, err
}

func (*blockingBackend) Subscribe(context.Context, string, func(string)) (func(), error) {
	return func() {}, nil
}
func (*blockingBackend) PublishCommand() string { return "PUBLISH" }
func (*blockingBackend) Caps() backend.Caps {
	return backend.Caps{HonorsDeadline: true, CallBound: time.Second}
}
func (*blockingBackend) Close() error { return nil }

// fillFlights starts MaxPipelinedFlights calls through b that block until
// the backend's release, so that the next call that may share a round trip
// queues.
func fillFlights(b backend.Backend, under *blockingBackend) {
	for i := 0; i < MaxPipelinedFlights; i++ {
		go b.Eval(context.Background(), callBy("busy"))
		<-under.started
	}
}

// In front of a backend, a call whose caller may cancel it never waits in
// the queue, whatever is under way: it runs at once, on its own context,
// so that the cancellation reaches the call itself.
func TestInFrontCancellableCallsRunAlone(t *testing.T) {
	under := newBlockingBackend()
	b, co := InFront(under)
	fillFlights(b, under)
	// Every round trip is busy: a call that may share one queues.
	go b.Eval(context.Background(), callBy("queued"))
	waitQueued(t, co, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := b.Eval(ctx, callBy("cancellable")); done <- err }()
	select {
	case h := <-under.started:
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
	close(under.release)
}

// In front of a backend, calls that only a deadline can end and that find
// every round trip busy go out together, as one EvalBatch of the backend;
// the wrapper states what the backend states.
func TestInFrontQueuedCallsShareABatch(t *testing.T) {
	under := newBlockingBackend()
	b, co := InFront(under)
	if co.MaxFlights != MaxPipelinedFlights || !co.Deadlines {
		t.Fatalf("MaxFlights %d, Deadlines %v; want %d, true", co.MaxFlights, co.Deadlines, MaxPipelinedFlights)
	}
	if got, want := b.Caps(), under.Caps(); got.HonorsDeadline != want.HonorsDeadline || got.CallBound != want.CallBound {
		t.Errorf("Caps %+v, want the backend's %+v", got, want)
	}
	fillFlights(b, under)
	replies := make(chan any, 2)
	for _, h := range []string{"q1", "q2"} {
		go func() { v, _ := b.Eval(context.Background(), callBy(h)); replies <- v }()
	}
	waitQueued(t, co, 2)
	close(under.release)
	got := map[any]bool{<-replies: true, <-replies: true}
	if !got["reply:q1"] || !got["reply:q2"] {
		t.Fatalf("replies %v, want each queued call's own", got)
	}
	under.mu.Lock()
	defer under.mu.Unlock()
	if len(under.batches) != 1 || len(under.batches[0]) != 2 {
		t.Errorf("batches %v, want the two queued calls in one", under.batches)
	}
}
