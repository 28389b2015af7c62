package runtime_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/embedded"
	"github.com/lockgen/lockgen/runtime"
)

// blockingEvalBackend blocks its first Eval until its context ends, and
// says when that happened; later calls (the clean-up of the abandoned
// attempt) go to the backend underneath.
type blockingEvalBackend struct {
	backend.Backend
	first          *sync.Once
	entered, ended chan struct{}
}

func (b blockingEvalBackend) Eval(ctx context.Context, c backend.Call) (any, error) {
	blocked := false
	b.first.Do(func() {
		blocked = true
		close(b.entered)
		<-ctx.Done()
		close(b.ended)
	})
	if blocked {
		return nil, ctx.Err()
	}
	return b.Backend.Eval(ctx, c)
}

// A Locker over a backend marked HonorsDeadlines runs a script call on the
// caller's context: cancelling the acquire reaches the call itself. (Over
// an unmarked backend the call runs detached from the caller, bounded by a
// timer, and only the acquire returns.)
func TestHonorsDeadlinesRunsCallsOnTheCallersContext(t *testing.T) {
	b := blockingEvalBackend{Backend: embedded.NewBackend(nil), first: &sync.Once{}, entered: make(chan struct{}), ended: make(chan struct{})}
	l := runtime.NewWithBackend(runtime.HonorsDeadlines(b))
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a deadline: the case where the marker matters
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := l.Acquire(ctx, runtime.Lock{Kind: runtime.Mutex, Key: "k", Wait: runtime.NoWait})
		done <- err
	}()
	<-b.entered
	cancel()
	select {
	case <-b.ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the script call did not see the acquire's cancellation")
	}
	if err := <-done; err == nil || errors.Is(err, runtime.ErrNotAcquired) {
		t.Fatalf("acquire cancelled during its call: %v, want an error", err)
	}
	if l.Backend().PublishCommand() != "PUBLISH" {
		t.Errorf("the marked backend does not pass calls through: PublishCommand %q", l.Backend().PublishCommand())
	}
}
