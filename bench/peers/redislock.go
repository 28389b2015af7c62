package peers

import (
	"context"
	"errors"
	"time"

	"github.com/bsm/redislock"
	goredislib "github.com/redis/go-redis/v9"
)

// bsm/redislock has no default wait at all (NoRetry: one try). Its README
// example retries every 100 ms; that is what a user copies, so it is the
// "default" here. Its docs recommend exponential backoff of at least 16 ms;
// for a hold of about a millisecond a user tuning for latency polls linearly
// instead, every millisecond.

func redislockDefault() Peer {
	return Peer{
		Library: "redislock", Setting: "default",
		Notes: "README example: RetryStrategy LinearBackoff(100ms); ttl 10s (required argument, no default; 30s in workload 8); Obtain called again after ErrNotObtained or its own deadline (the ttl, on a context without one)",
		Polls: true,
		open: func(cfg Config) (Client, error) {
			return openRedislock(cfg, func() redislock.RetryStrategy { return redislock.LinearBackoff(100 * time.Millisecond) })
		},
	}
}

func redislockTuned() Peer {
	return Peer{
		Library: "redislock", Setting: "tuned",
		Notes: "RetryStrategy LinearBackoff(1ms): poll every millisecond",
		Polls: true,
		open: func(cfg Config) (Client, error) {
			return openRedislock(cfg, func() redislock.RetryStrategy { return redislock.LinearBackoff(time.Millisecond) })
		},
	}
}

// redislockAutoPipeline is the README default on go-redis's AutoPipeliner
// (go-redis v9.23): concurrent goroutines' commands are batched into
// pipelines on a few connections. go-redis marks it experimental; a queued
// command no longer honours its own context.
func redislockAutoPipeline() Peer {
	return Peer{
		Library: "redislock", Setting: "autopipeline",
		Notes: "as default, on go-redis's AutoPipeliner (client.AutoPipeline(), default options)",
		Polls: true,
		open: func(cfg Config) (Client, error) {
			rdb, cc, ap, err := newAutoPipelinedClient(cfg.Addr)
			if err != nil {
				return nil, err
			}
			c := newRedislockClient(cfg, rdb, cc, ap, func() redislock.RetryStrategy { return redislock.LinearBackoff(100 * time.Millisecond) })
			c.closeAP = ap.Close
			return c, nil
		},
	}
}

type redislockClient struct {
	rdb      *goredislib.Client
	cmds     goredislib.Cmdable // rdb, or its AutoPipeliner
	closeAP  func() error       // nil without an AutoPipeliner
	calls    *callCounter
	locker   *redislock.Client
	strategy func() redislock.RetryStrategy
	lease    time.Duration
	manual   bool
}

func openRedislock(cfg Config, strategy func() redislock.RetryStrategy) (Client, error) {
	rdb, cc := newGoRedisClient(cfg.Addr)
	return newRedislockClient(cfg, rdb, cc, rdb, strategy), nil
}

// redisScripter is what redislock and the workload's INCR need: a
// *redis.Client or its AutoPipeliner.
type redisScripter interface {
	redislock.RedisClient
	goredislib.Cmdable
}

func newRedislockClient(cfg Config, rdb *goredislib.Client, cc *callCounter, via redisScripter, strategy func() redislock.RetryStrategy) *redislockClient {
	lease := cfg.Lease
	if lease <= 0 {
		lease = DefaultLease
	}
	return &redislockClient{rdb: rdb, cmds: via, calls: cc, locker: redislock.New(via), strategy: strategy, lease: lease, manual: cfg.ManualRenew}
}

func (c *redislockClient) Lock(ctx context.Context, key string) (Held, error) {
	return retryUntilDone(ctx, func() (Held, error) {
		// A strategy may keep state (exponential backoff counts), so each
		// Obtain gets a fresh one, as the docs' examples do.
		lock, err := c.locker.Obtain(ctx, key, c.lease, &redislock.Options{RetryStrategy: c.strategy()})
		if err != nil {
			return nil, err
		}
		h := &redislockHeld{lock: lock}
		if c.manual {
			h.renew = startManualRenewal(c.lease, func(ctx context.Context) error {
				return lock.Refresh(ctx, c.lease, nil)
			})
		}
		return h, nil
	}, func(err error) bool {
		// Obtain gives up with DeadlineExceeded after ttl when ctx has no
		// deadline of its own; a caller still waiting asks again.
		return errors.Is(err, redislock.ErrNotObtained) || errors.Is(err, context.DeadlineExceeded)
	})
}

func (c *redislockClient) Incr(ctx context.Context, key string) error {
	return c.cmds.Incr(ctx, key).Err()
}

func (c *redislockClient) Counts() Counts { return c.calls.counts() }

func (c *redislockClient) Close() error {
	if c.closeAP != nil {
		c.closeAP()
	}
	return c.rdb.Close()
}

type redislockHeld struct {
	lock  *redislock.Lock
	renew *manualRenewal
}

func (h *redislockHeld) Unlock(ctx context.Context) error {
	h.renew.Stop()
	return h.lock.Release(ctx)
}
