package peers

import (
	"context"
	"net"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
)

// Counts is what a client sent to Redis.
type Counts struct {
	Calls    int64 // round trips as the caller sees them: a pipeline counts once
	Commands int64 // commands sent: a pipeline counts each of its commands
}

// callCounter is a go-redis hook that counts calls and commands. Pub/Sub
// commands bypass go-redis hooks; the harness counts those on the server.
type callCounter struct{ calls, commands atomic.Int64 }

func (c *callCounter) counts() Counts {
	return Counts{Calls: c.calls.Load(), Commands: c.commands.Load()}
}

func (c *callCounter) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		return next(ctx, network, addr)
	}
}

func (c *callCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.calls.Add(1)
		c.commands.Add(1)
		return next(ctx, cmd)
	}
}

func (c *callCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.calls.Add(1)
		c.commands.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}

// newGoRedisClient returns a go-redis client for addr with a call counter.
// The pool is sized for the largest workload (10,000 locks taken by many
// goroutines) so that pool waits do not dominate.
func newGoRedisClient(addr string) (*redis.Client, *callCounter) {
	rdb := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 64})
	cc := &callCounter{}
	rdb.AddHook(cc)
	return rdb, cc
}

// newAutoPipelinedClient is newGoRedisClient with go-redis's AutoPipeliner
// on top (default options), for the peers that measure it: commands sent
// through ap are batched; the plain client stays for the rest.
func newAutoPipelinedClient(addr string) (*redis.Client, *callCounter, *redis.AutoPipeliner, error) {
	rdb, cc := newGoRedisClient(addr)
	ap, err := rdb.AutoPipeline()
	if err != nil {
		rdb.Close()
		return nil, nil, nil, err
	}
	return rdb, cc, ap, nil
}

// countingRueidis wraps a rueidis.Client and counts the calls made through
// it; rueidislock issues every command through the client it is given.
type countingRueidis struct {
	rueidis.Client
	calls, commands *atomic.Int64
}

func (c countingRueidis) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	c.calls.Add(1)
	c.commands.Add(1)
	return c.Client.Do(ctx, cmd)
}

func (c countingRueidis) DoMulti(ctx context.Context, multi ...rueidis.Completed) []rueidis.RedisResult {
	c.calls.Add(1)
	c.commands.Add(int64(len(multi)))
	return c.Client.DoMulti(ctx, multi...)
}

func (c countingRueidis) DoCache(ctx context.Context, cmd rueidis.Cacheable, ttl time.Duration) rueidis.RedisResult {
	c.calls.Add(1)
	c.commands.Add(1)
	return c.Client.DoCache(ctx, cmd, ttl)
}

func (c countingRueidis) DoMultiCache(ctx context.Context, multi ...rueidis.CacheableTTL) []rueidis.RedisResult {
	c.calls.Add(1)
	c.commands.Add(int64(len(multi)))
	return c.Client.DoMultiCache(ctx, multi...)
}
