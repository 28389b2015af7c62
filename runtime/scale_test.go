package runtime_test

import (
	"context"
	stdruntime "runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockgen/lockgen/runtime"
	"github.com/redis/go-redis/v9"
)

// pipelineCounter counts the pipelines a go-redis client sends, and the
// commands in them.
type pipelineCounter struct{ pipelines, cmds atomic.Int64 }

func (c *pipelineCounter) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (c *pipelineCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (c *pipelineCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.pipelines.Add(1)
		c.cmds.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}

// 10,000 locks held at once renew with a constant number of goroutines and
// about one pipeline per 1,000 renewals per tick.
func TestManyHeldLocksRenewInBatches(t *testing.T) {
	const n = 10000
	// A renewal must be acknowledged within the lease (less the time from
	// its send): 4.5 s leaves room for 10,000 renewals per period on a
	// loaded 2-core machine, where 1.5 s lost locks under make test with
	// busy loops.
	const lease = 4500 * time.Millisecond
	rdb := redisClient(t)
	var counter pipelineCounter
	rdb.AddHook(&counter)
	var renewed atomic.Int64
	l := runtime.New(rdb, runtime.WithKeyPrefix(uniquePrefix(t)), runtime.WithObserver(func(e runtime.Event) {
		if e.Kind == runtime.EventRenewed {
			renewed.Add(1)
		}
	}))
	defer l.Close()

	before := stdruntime.NumGoroutine()
	start := time.Now()
	held := acquireMany(t, l, n, lease)
	took := time.Since(start)
	delta := stdruntime.NumGoroutine() - before

	counter.pipelines.Store(0)
	renewed.Store(0)
	const watch = 6 * time.Second
	time.Sleep(watch) // the period observed: the renewals are counted over it
	pipelines := counter.pipelines.Load()
	renewals := renewed.Load()
	ticks := int64(watch / (lease / 3))
	t.Logf("acquired %d locks in %v; goroutine delta %d; over %v (%d renewal periods): %d pipelines, %d renewals (%.1f per pipeline)",
		n, took.Round(time.Millisecond), delta, watch, ticks, pipelines, renewals, float64(renewals)/float64(max(pipelines, 1)))

	if delta > 10 {
		t.Errorf("goroutine delta %d with %d locks held, want a constant few", delta, n)
	}
	if renewals < n*(ticks-1) {
		t.Errorf("%d renewals in %v, want >= %d", renewals, watch, n*(ticks-1))
	}
	// Locks acquired within lease/6 of each other renew together, in
	// batches of at most 1,000 calls.
	spread := int64(took/(lease/6)) + 1
	batches := int64((n + 999) / 1000)
	if pipelines > (ticks+1)*spread*batches {
		t.Errorf("%d pipelines for %d renewal periods, want <= %d", pipelines, ticks, (ticks+1)*spread*batches)
	}
	for _, h := range held {
		if err := h.Context().Err(); err != nil {
			t.Fatalf("a held lock's context ended: %v", context.Cause(h.Context()))
		}
	}
	for _, h := range held {
		if err := h.Release(); err != nil {
			t.Fatal(err)
		}
	}
}
