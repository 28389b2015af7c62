package goredis

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/internal/callqueue"
	"github.com/lockgen/lockgen/internal/callqueue/queuetest"
	"github.com/lockgen/lockgen/lua"
	"github.com/lockgen/lockgen/redistest"
)

// A go-redis client that ends each call at its context's deadline
// (ContextTimeoutEnabled) runs the Locker's calls on their callers'
// goroutines, and calls that queue behind those under way still share one
// pipeline, as over any other go-redis client.
func TestGoRedisWithContextTimeoutSharesRoundTrips(t *testing.T) {
	proxy, rdb, pipes := redistest.DeadlineClientBehindProxy(t)
	b := New(rdb).(*goRedisBackend)
	if bound, honors := b.callLimit(); !honors || bound <= 0 {
		t.Fatalf("callLimit = %v, %v: want the client's bound, honoured deadlines", bound, honors)
	}
	if b.co == nil || !b.co.Deadlines {
		t.Fatal("no coalescer bounded by deadlines over a client with ContextTimeoutEnabled")
	}
	ctx := context.Background()
	if _, err := b.Eval(ctx, callBy("load")); err == nil || !strings.HasPrefix(err.Error(), "ERR lockgen") {
		t.Fatalf("first call: %v, want the script's refusal of a call without KEYS", err) // and the script cached
	}

	proxy.SetMode(redistest.Blackhole())
	var wg sync.WaitGroup
	errs := make(chan error, callqueue.DefaultMaxFlights+2)
	eval := func(holder string) {
		defer wg.Done()
		_, err := b.Eval(ctx, callBy(holder))
		errs <- err
	}
	for range callqueue.DefaultMaxFlights {
		wg.Add(1)
		go eval("busy")
	}
	queuetest.WaitFlights(t, b.co, callqueue.DefaultMaxFlights)
	wg.Add(2)
	go eval("queued-1")
	queuetest.WaitQueued(t, b.co, 1)
	go eval("queued-2")
	queuetest.WaitQueued(t, b.co, 2)
	proxy.SetMode(redistest.Forward())
	wg.Wait()
	close(errs)
	for err := range errs {
		if err == nil || !strings.HasPrefix(err.Error(), "ERR lockgen") {
			t.Errorf("call: %v, want the script's own reply", err)
		}
	}
	if sizes := pipes.Sizes(); len(sizes) != 1 || sizes[0] != 2 {
		t.Errorf("pipelines sent: %v, want one, with the two calls that queued", sizes)
	}
}

// callBy is a call of holder's that the script refuses (no KEYS), after
// the round trip.
func callBy(holder string) backend.Call {
	return backend.Call{Script: lua.MutexAcquire, Args: []string{holder, "1000", "PUBLISH", "0"}}
}
