package runtime

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockgen/lockgen/redistest"
)

// pipelineSizes records the size of every pipeline of script calls a
// go-redis client sends (not those that set up a new connection).
type pipelineSizes struct {
	mu    sync.Mutex
	sizes []int
}

func (p *pipelineSizes) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (p *pipelineSizes) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (p *pipelineSizes) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if len(cmds) > 0 && cmds[0].Name() == "evalsha" {
			p.mu.Lock()
			p.sizes = append(p.sizes, len(cmds))
			p.mu.Unlock()
		}
		return next(ctx, cmds)
	}
}

// A go-redis client that ends each call at its context's deadline
// (ContextTimeoutEnabled) runs the Locker's calls on their callers'
// goroutines, and calls that queue behind those under way still share one
// pipeline, as over any other go-redis client.
func TestGoRedisWithContextTimeoutSharesRoundTrips(t *testing.T) {
	proxy := redistest.StartProxy(t, redistest.Start(t).Addr)
	rdb := redis.NewClient(&redis.Options{Addr: proxy.Addr, ContextTimeoutEnabled: true, PoolSize: 16,
		ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second})
	t.Cleanup(func() { rdb.Close() })
	pipes := &pipelineSizes{}
	rdb.AddHook(pipes)
	b := NewGoRedisBackend(rdb).(*goRedisBackend)
	if bound, honors := b.callLimit(); !honors || bound <= 0 {
		t.Fatalf("callLimit = %v, %v: want the client's bound, honoured deadlines", bound, honors)
	}
	if b.co == nil || !b.co.deadlines {
		t.Fatal("no coalescer bounded by deadlines over a client with ContextTimeoutEnabled")
	}
	ctx := context.Background()
	if _, err := b.Eval(ctx, callBy("load")); err == nil || !strings.HasPrefix(err.Error(), "ERR lockgen") {
		t.Fatalf("first call: %v, want the script's refusal of a call without KEYS", err) // and the script cached
	}

	proxy.SetMode(redistest.Blackhole())
	var wg sync.WaitGroup
	errs := make(chan error, maxFlights+2)
	eval := func(holder string) {
		defer wg.Done()
		_, err := b.Eval(ctx, callBy(holder))
		errs <- err
	}
	for range maxFlights {
		wg.Add(1)
		go eval("busy")
	}
	waitFlights(t, b.co, maxFlights)
	wg.Add(2)
	go eval("queued-1")
	waitQueued(t, b.co, 1)
	go eval("queued-2")
	waitQueued(t, b.co, 2)
	proxy.SetMode(redistest.Forward())
	wg.Wait()
	close(errs)
	for err := range errs {
		if err == nil || !strings.HasPrefix(err.Error(), "ERR lockgen") {
			t.Errorf("call: %v, want the script's own reply", err)
		}
	}
	pipes.mu.Lock()
	defer pipes.mu.Unlock()
	if len(pipes.sizes) != 1 || pipes.sizes[0] != 2 {
		t.Errorf("pipelines sent: %v, want one, with the two calls that queued", pipes.sizes)
	}
}
