package redistest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// PipelineSizes is a go-redis hook that records the size of every
// pipeline of script calls a client sends (those that start with EVALSHA,
// not those that set up a new connection), for tests that check that
// calls shared a round trip.
type PipelineSizes struct {
	mu    sync.Mutex
	sizes []int
}

// Sizes returns the sizes recorded so far, in the order sent.
func (p *PipelineSizes) Sizes() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]int(nil), p.sizes...)
}

func (p *PipelineSizes) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (p *PipelineSizes) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (p *PipelineSizes) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if len(cmds) > 0 && cmds[0].Name() == "evalsha" {
			p.mu.Lock()
			p.sizes = append(p.sizes, len(cmds))
			p.mu.Unlock()
		}
		return next(ctx, cmds)
	}
}

// DeadlineClientBehindProxy starts a server behind a proxy and returns the
// proxy, a go-redis client to it that ends calls at their context's
// deadline (ContextTimeoutEnabled, with long timeouts of its own), and
// the record of that client's pipelines of script calls.
func DeadlineClientBehindProxy(t testing.TB) (*Proxy, *redis.Client, *PipelineSizes) {
	proxy := StartProxy(t, Start(t).Addr)
	rdb := redis.NewClient(&redis.Options{Addr: proxy.Addr, ContextTimeoutEnabled: true, PoolSize: 16,
		ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second})
	t.Cleanup(func() { rdb.Close() })
	pipes := &PipelineSizes{}
	rdb.AddHook(pipes)
	return proxy, rdb, pipes
}
