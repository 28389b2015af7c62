package runtime_test

import (
	"context"
	"os/exec"
	stdruntime "runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockgen/lockgen/redistest"
	"github.com/lockgen/lockgen/runtime"
	"github.com/redis/go-redis/v9"
)

// maxGauge keeps the highest value it was shown.
type maxGauge struct{ v atomic.Int64 }

func (g *maxGauge) see(n int64) {
	for {
		old := g.v.Load()
		if n <= old || g.v.CompareAndSwap(old, n) {
			return
		}
	}
}

// pipelineGauge records the largest script pipeline a go-redis client
// sends and the most it has in flight at once. Other pipelines (go-redis
// sets up each new connection with one) do not count.
type pipelineGauge struct {
	pipelines        atomic.Int64
	inflight         atomic.Int64
	largest, busiest maxGauge
}

func (g *pipelineGauge) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (g *pipelineGauge) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (g *pipelineGauge) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if len(cmds) == 0 || !strings.HasPrefix(cmds[0].Name(), "eval") {
			return next(ctx, cmds)
		}
		g.pipelines.Add(1)
		g.largest.see(int64(len(cmds)))
		g.busiest.see(g.inflight.Add(1))
		defer g.inflight.Add(-1)
		return next(ctx, cmds)
	}
}

// burnCPU starts n shell processes that spin until the test ends, as busy
// neighbours on the machine would.
func burnCPU(t *testing.T, n int) {
	t.Helper()
	for range n {
		cmd := exec.Command("sh", "-c", "while :; do :; done")
		if err := cmd.Start(); err != nil {
			t.Fatalf("start a busy loop: %v", err)
		}
		t.Cleanup(func() {
			cmd.Process.Kill()
			cmd.Wait()
		})
	}
}

// acquireMany takes n mutexes key0..key<n-1> with a few goroutines.
func acquireMany(t *testing.T, l *runtime.Locker, n int, lease time.Duration) []*runtime.Held {
	t.Helper()
	ctx := ctxTimeout(t, 2*time.Minute)
	held := make([]*runtime.Held, n)
	const workers = 16
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				h, err := l.Acquire(ctx, runtime.Lock{Kind: runtime.Mutex, Key: "key" + strconv.Itoa(i), Lease: lease})
				if err != nil {
					errs <- err
					return
				}
				held[i] = h
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	return held
}

// releaseAll gives every lock back, failing the test on any error.
func releaseAll(t *testing.T, held []*runtime.Held) {
	t.Helper()
	for _, h := range held {
		if err := h.Release(); err != nil {
			t.Error(err)
		}
	}
}

// 10,000 locks with a 3s lease stay held for 20s (about 20 renewal periods)
// while two busy loops compete for the CPU: renewals go in pipelines of at
// most 1,000 calls, a few at a time, and none of them is lost.
func TestWatchdogKeepsManyLocksUnderLoad(t *testing.T) {
	const n = 10000
	const lease = 3 * time.Second
	const watch = 20 * time.Second
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	var gauge pipelineGauge
	rdb.AddHook(&gauge)
	var renewed, lost atomic.Int64
	l := runtime.New(rdb, runtime.WithObserver(func(e runtime.Event) {
		switch e.Kind {
		case runtime.EventRenewed:
			renewed.Add(1)
		case runtime.EventLost:
			lost.Add(1)
		}
	}))
	t.Cleanup(func() { l.Close() })

	burnCPU(t, 2)
	before := stdruntime.NumGoroutine()
	start := time.Now()
	held := acquireMany(t, l, n, lease)
	took := time.Since(start)
	renewed.Store(0)
	gauge.pipelines.Store(0)
	time.Sleep(watch)
	renewals, pipelines := renewed.Load(), gauge.pipelines.Load()
	delta := stdruntime.NumGoroutine() - before
	t.Logf("acquired %d locks in %v with two busy loops; over %v: %d renewals in %d pipelines (%.0f per pipeline), largest pipeline %d calls, at most %d in flight; goroutine delta %d",
		n, took.Round(time.Millisecond), watch, renewals, pipelines, float64(renewals)/float64(max(pipelines, 1)),
		gauge.largest.v.Load(), gauge.busiest.v.Load(), delta)

	if got := lost.Load(); got != 0 {
		t.Errorf("%d locks lost under load", got)
	}
	for _, h := range held {
		if h.Context().Err() != nil {
			t.Fatalf("a held lock's context ended: %v", context.Cause(h.Context()))
		}
	}
	// Each lock must be renewed at least once per lease to survive; the
	// watchdog aims at once per lease/3.
	if want := int64(n) * int64(watch/lease); renewals < want {
		t.Errorf("%d renewals in %v, want >= %d", renewals, watch, want)
	}
	if got := gauge.largest.v.Load(); got > 1000 {
		t.Errorf("a pipeline of %d calls, want at most 1000", got)
	}
	if got := gauge.busiest.v.Load(); got > 8 {
		t.Errorf("%d pipelines in flight at once, want a bounded few (<= 8)", got)
	}
	if per := renewals / max(pipelines, 1); per < 100 {
		t.Errorf("%d renewals per pipeline, want them batched (>= 100)", per)
	}
	if delta > 10+8 {
		t.Errorf("goroutine delta %d with %d locks held, want a constant few", delta, n)
	}
	releaseAll(t, held)
}
