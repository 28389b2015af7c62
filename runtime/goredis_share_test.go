package runtime

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/lockgen/lockgen/internal/callqueue"
	"github.com/lockgen/lockgen/internal/callqueue/queuetest"
	"github.com/lockgen/lockgen/redistest"
)

// Acquires whose callers may cancel them (a request's context, with a
// deadline) share pipelines too when they queue over such a client: each
// waits in the queue listening to its context (coalesce_within.go), so one
// whose caller gives up returns at once, and is never sent if it had not
// been.
func TestGoRedisWithContextTimeoutSharesCancellableAcquires(t *testing.T) {
	proxy, rdb, pipes := redistest.DeadlineClientBehindProxy(t)
	l := New(rdb)
	t.Cleanup(func() { l.Close() })
	co := l.queue
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	warm, err := l.Acquire(ctx, Lock{Kind: Mutex, Key: "share-warm"})
	if err != nil {
		t.Fatal(err)
	}
	if err := warm.Release(); err != nil {
		t.Fatal(err)
	}

	proxy.SetMode(redistest.Blackhole())
	type result struct {
		key string
		h   *Held
		err error
	}
	results := make(chan result, callqueue.DefaultMaxFlights+3)
	acquire := func(ctx context.Context, key string) {
		h, err := l.Acquire(ctx, Lock{Kind: Mutex, Key: key})
		results <- result{key, h, err}
	}
	for i := range callqueue.DefaultMaxFlights {
		go acquire(ctx, fmt.Sprint("share-busy-", i))
	}
	queuetest.WaitFlights(t, co, callqueue.DefaultMaxFlights)
	go acquire(ctx, "share-queued-1")
	queuetest.WaitQueued(t, co, 1)
	quitCtx, quit := context.WithCancel(ctx)
	go acquire(quitCtx, "share-quitter")
	queuetest.WaitQueued(t, co, 2)
	go acquire(ctx, "share-queued-2")
	queuetest.WaitQueued(t, co, 3)
	quit()
	r := <-results // the round trips under way are still blackholed
	if r.key != "share-quitter" || !errors.Is(r.err, context.Canceled) {
		t.Fatalf("first to return: %s with %v, want the cancelled caller with context.Canceled", r.key, r.err)
	}
	proxy.SetMode(redistest.Forward())
	for range callqueue.DefaultMaxFlights + 2 {
		r := <-results
		if r.err != nil {
			t.Fatalf("%s: %v", r.key, r.err)
		}
		if err := r.h.Release(); err != nil {
			t.Fatalf("%s: release: %v", r.key, err)
		}
	}
	sizes := pipes.Sizes()
	if len(sizes) == 0 || sizes[0] != 2 {
		t.Errorf("pipelines sent: %v, want the two acquires that stayed queued as the first", sizes)
	}
	// The cancelled acquire was never sent: its key is free.
	h, err := l.Acquire(ctx, Lock{Kind: Mutex, Key: "share-quitter", Wait: NoWait})
	if err != nil {
		t.Fatalf("the cancelled caller's lock: %v, want it free", err)
	}
	h.Release()
}
