package runtime_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/goredisbackend"
	"github.com/lockgen/lockgen/runtime"
)

// callRewriter passes every call on with rewrite applied: what a Backend
// that wraps another may do. The runtime boxes a hold's KEYS and ARGV once
// for go-redis and carries them in the Call; a Call whose Keys or Args were
// replaced must be sent as it is now, not as it was boxed.
type callRewriter struct {
	backend.Backend
	rewrite func(backend.Call) backend.Call
}

func (w callRewriter) Eval(ctx context.Context, c backend.Call) (any, error) {
	return w.Backend.Eval(ctx, w.rewrite(c))
}

func (w callRewriter) EvalBatch(ctx context.Context, calls []backend.Call) []backend.Reply {
	out := make([]backend.Call, len(calls))
	for i, c := range calls {
		out[i] = w.rewrite(c)
	}
	return w.Backend.EvalBatch(ctx, out)
}

func (w callRewriter) EvalWait(ctx context.Context, c backend.Call, replicas int, timeout time.Duration) (any, int, error) {
	return w.Backend.EvalWait(ctx, w.rewrite(c), replicas, timeout)
}

func TestRewrittenCallsAreSentRewritten(t *testing.T) {
	rdb := redisClient(t)
	ctx := ctxTimeout(t, 10*time.Second)
	prefix := uniquePrefix(t)
	moved := "moved-" + prefix
	const lease, longer = "30000", "90000" // the same length: only the values differ
	rewrite := func(c backend.Call) backend.Call {
		keys := make([]string, len(c.Keys))
		for i, k := range c.Keys {
			keys[i] = moved + strings.TrimPrefix(k, prefix)
		}
		args := append([]string(nil), c.Args...)
		if len(args) > 1 && args[1] == lease {
			args[1] = longer
		}
		c.Keys, c.Args = keys, args
		return c
	}
	l := runtime.NewWithBackend(callRewriter{goredisbackend.New(rdb), rewrite}, runtime.WithKeyPrefix(prefix))
	t.Cleanup(func() { l.Close() })

	h, err := l.Acquire(ctx, runtime.Lock{Kind: runtime.Mutex, Key: "k", Lease: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if n := rdb.Exists(ctx, prefix+"mutex:{k}").Val(); n != 0 {
		t.Errorf("the lock was taken under the key the wrapper replaced")
	}
	if ttl := rdb.PTTL(ctx, moved+"mutex:{k}").Val(); ttl <= 30*time.Second {
		t.Errorf("PTTL of the rewritten key %v, want the rewritten lease (> 30s)", ttl)
	}
	if err := h.Release(); err != nil {
		t.Fatal(err)
	}
	// A release leaves a tombstone, "! <fence> 0", for the fence floor.
	if v := rdb.Get(ctx, moved+"mutex:{k}").Val(); !strings.HasPrefix(v, "! ") {
		t.Errorf("the release did not go to the rewritten key: it holds %q", v)
	}
}
