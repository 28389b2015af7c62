package runtime_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/runtime"
	"github.com/redis/go-redis/v9"
)

// An Acquire whose context is already done sends nothing, whether the
// context was cancelled or its deadline has passed (before: a context past
// its deadline still sent the acquire, which Redis granted, a fence was
// used, and the clean-up gave it back).
func TestAcquireWithDoneContextSendsNothing(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		var calls atomic.Int64
		l := tg.newLockerVia(t, func(b backend.Backend) backend.Backend { return &countCalls{Backend: b, n: &calls} })
		expired, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
		defer cancel()
		cancelled, cancel2 := context.WithCancel(context.Background())
		cancel2()
		for name, c := range map[string]struct {
			ctx  context.Context
			want error
		}{
			"expired":   {expired, context.DeadlineExceeded},
			"cancelled": {cancelled, context.Canceled},
		} {
			_, err := l.Acquire(c.ctx, runtime.Lock{Kind: runtime.Mutex, Key: "done-" + name})
			if !errors.Is(err, c.want) {
				t.Errorf("%s: %v, want %v", name, err, c.want)
			}
		}
		// A call sent anyway runs on a goroutine of its own, which the
		// Acquire does not wait for: give it time to show.
		for end := time.Now().Add(500 * time.Millisecond); calls.Load() == 0 && time.Now().Before(end); {
			time.Sleep(5 * time.Millisecond)
		}
		if n := calls.Load(); n != 0 {
			t.Errorf("%d calls sent for acquires whose context was done, want none", n)
		}
	})
}

type countCalls struct {
	backend.Backend
	n *atomic.Int64
}

func (c *countCalls) Eval(ctx context.Context, call backend.Call) (any, error) {
	c.n.Add(1)
	return c.Backend.Eval(ctx, call)
}

func (c *countCalls) EvalBatch(ctx context.Context, calls []backend.Call) []backend.Reply {
	c.n.Add(int64(len(calls)))
	return c.Backend.EvalBatch(ctx, calls)
}

// The same over a go-redis client as New uses it (its coalescer, its
// bounds), counting what the client is asked to send.
func TestAcquireWithDoneContextSendsNothingGoRedis(t *testing.T) {
	rdb := redis.NewClient(redisServer(t).Options())
	t.Cleanup(func() { rdb.Close() })
	var sent atomic.Int64
	rdb.AddHook(sendCounter{&sent})
	l := runtime.New(rdb, runtime.WithKeyPrefix(uniquePrefix(t)))
	t.Cleanup(func() { l.Close() })
	expired, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	for _, wait := range []time.Duration{0, time.Second, runtime.NoWait} {
		if _, err := l.Acquire(expired, runtime.Lock{Kind: runtime.Mutex, Key: "done-expired", Wait: wait}); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("wait %v: %v, want DeadlineExceeded", wait, err)
		}
	}
	for end := time.Now().Add(500 * time.Millisecond); sent.Load() == 0 && time.Now().Before(end); {
		time.Sleep(5 * time.Millisecond)
	}
	if n := sent.Load(); n != 0 {
		t.Errorf("%d scripts sent for acquires whose context had expired, want none", n)
	}
}

// sendCounter counts the scripts a go-redis client is asked to run
// (connection set-up and the server watch's INFO are not counted).
type sendCounter struct{ n *atomic.Int64 }

func (c sendCounter) count(cmd redis.Cmder) {
	if name := cmd.Name(); name == "evalsha" || name == "eval" {
		c.n.Add(1)
	}
}

func (c sendCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c sendCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { c.count(cmd); return next(ctx, cmd) }
}
func (c sendCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			c.count(cmd)
		}
		return next(ctx, cmds)
	}
}
