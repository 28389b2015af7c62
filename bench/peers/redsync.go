package peers

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	goredislib "github.com/redis/go-redis/v9"
)

// redsync implements Redlock with polling: a waiter sleeps a random
// 50-250 ms between tries by default and gives up after 32 tries.

func redsyncDefault() Peer {
	return Peer{
		Library: "redsync", Setting: "default",
		Notes: "redsync/v4 NewMutex defaults: expiry 8s, 32 tries, random 50-250 ms between tries; Lock called again after ErrFailed",
		Polls: true,
		open: func(cfg Config) (Client, error) {
			return openRedsync(cfg, nil)
		},
	}
}

func redsyncTuned() Peer {
	return Peer{
		Library: "redsync", Setting: "tuned",
		Notes: "WithRetryDelay(1ms), WithTries(MaxInt32): poll every millisecond, never give up before the context",
		Polls: true,
		open: func(cfg Config) (Client, error) {
			return openRedsync(cfg, []redsync.Option{redsync.WithRetryDelay(time.Millisecond), redsync.WithTries(math.MaxInt32)})
		},
	}
}

type redsyncClient struct {
	rdb    *goredislib.Client
	calls  *callCounter
	rs     *redsync.Redsync
	opts   []redsync.Option
	lease  time.Duration
	manual bool
}

func openRedsync(cfg Config, opts []redsync.Option) (Client, error) {
	rdb, cc := newGoRedisClient(cfg.Addr)
	c := &redsyncClient{rdb: rdb, calls: cc, rs: redsync.New(goredis.NewPool(rdb)), lease: 8 * time.Second, manual: cfg.ManualRenew}
	if cfg.Lease > 0 {
		c.lease = cfg.Lease
		opts = append(opts, redsync.WithExpiry(cfg.Lease))
	}
	c.opts = opts
	return c, nil
}

func (c *redsyncClient) Lock(ctx context.Context, key string) (Held, error) {
	m := c.rs.NewMutex(key, c.opts...)
	return retryUntilDone(ctx, func() (Held, error) {
		if err := m.LockContext(ctx); err != nil {
			return nil, err
		}
		h := &redsyncHeld{m: m}
		if c.manual {
			h.renew = startManualRenewal(c.lease, func(ctx context.Context) error {
				ok, err := m.ExtendContext(ctx)
				if err == nil && !ok {
					err = redsync.ErrExtendFailed
				}
				return err
			})
		}
		return h, nil
	}, func(err error) bool {
		// ErrFailed: all tries used up; ErrTaken: a node held by another.
		var taken *redsync.ErrTaken
		return errors.Is(err, redsync.ErrFailed) || errors.As(err, &taken)
	})
}

func (c *redsyncClient) Incr(ctx context.Context, key string) error {
	return c.rdb.Incr(ctx, key).Err()
}

func (c *redsyncClient) Counts() Counts { return c.calls.counts() }
func (c *redsyncClient) Close() error   { return c.rdb.Close() }

type redsyncHeld struct {
	m     *redsync.Mutex
	renew *manualRenewal
}

func (h *redsyncHeld) Unlock(ctx context.Context) error {
	h.renew.Stop()
	ok, err := h.m.UnlockContext(ctx)
	if err == nil && !ok {
		err = errors.New("redsync: unlock refused")
	}
	return err
}
