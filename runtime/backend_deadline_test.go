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
// attempt) go to the backend underneath. It states that its calls end at
// their contexts' deadlines (Caps.HonorsDeadline), as rueidis's do.
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

func (b blockingEvalBackend) Caps() backend.Caps {
	c := b.Backend.Caps()
	c.HonorsDeadline = true
	return c
}

// A Locker over a backend that states Caps.HonorsDeadline runs a script
// call on the caller's context, through the coalescer it puts in front of
// the backend: cancelling the acquire reaches the call itself. (Over any
// other backend the call runs detached from the caller, bounded by a
// timer, and only the acquire returns.)
func TestHonorsDeadlineRunsCallsOnTheCallersContext(t *testing.T) {
	b := blockingEvalBackend{Backend: embedded.NewBackend(nil), first: &sync.Once{}, entered: make(chan struct{}), ended: make(chan struct{})}
	l := runtime.NewWithBackend(b)
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a deadline: the case where the capability matters
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
	if _, ok := l.Backend().(blockingEvalBackend); !ok {
		t.Errorf("Backend() is %T, want the backend given, not the coalescer in front of it", l.Backend())
	}
}
