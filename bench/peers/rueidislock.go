package peers

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/redis/rueidis"
	"github.com/redis/rueidis/rueidislock"
)

// rueidislock wakes waiters through client-side caching invalidations and
// cancels the holder's context when the lock is lost: the closest in spirit
// to lockgen. Its defaults assume three Redis keys per lock (KeyMajority 2,
// meant for several instances); its README tells single-instance users to
// set KeyMajority 1, and NoLoopTracking on Redis >= 7.0.5.

func rueidislockDefault() Peer {
	return Peer{
		Library: "rueidislock", Setting: "default",
		Notes:     "NewLocker defaults: KeyMajority 2 (3 keys), KeyValidity 5s, ExtendInterval 2.5s, TryNextAfter 20ms, client-side caching on",
		AutoRenew: true,
		open: func(cfg Config) (Client, error) {
			return openRueidislock(cfg, rueidislock.LockerOption{})
		},
	}
}

func rueidislockTuned() Peer {
	return Peer{
		Library: "rueidislock", Setting: "tuned",
		Notes:     "README single-instance settings: KeyMajority 1, NoLoopTracking true (Redis >= 7.0.5)",
		AutoRenew: true,
		open: func(cfg Config) (Client, error) {
			return openRueidislock(cfg, rueidislock.LockerOption{KeyMajority: 1, NoLoopTracking: true})
		},
	}
}

type rueidislockClient struct {
	locker          rueidislock.Locker
	client          rueidis.Client // the one the locker built, for Incr
	calls, commands *atomic.Int64
}

func openRueidislock(cfg Config, opt rueidislock.LockerOption) (Client, error) {
	calls, commands := &atomic.Int64{}, &atomic.Int64{}
	var built rueidis.Client
	opt.ClientOption.InitAddress = []string{cfg.Addr}
	opt.ClientBuilder = func(o rueidis.ClientOption) (rueidis.Client, error) {
		c, err := rueidis.NewClient(o)
		if err != nil {
			return nil, err
		}
		built = countingRueidis{Client: c, calls: calls, commands: commands}
		return built, nil
	}
	if cfg.Lease > 0 {
		opt.KeyValidity = cfg.Lease
	}
	l, err := rueidislock.NewLocker(opt)
	if err != nil {
		return nil, err
	}
	return &rueidislockClient{locker: l, client: built, calls: calls, commands: commands}, nil
}

func (c *rueidislockClient) Lock(ctx context.Context, key string) (Held, error) {
	return retryUntilDone(ctx, func() (Held, error) {
		_, cancel, err := c.locker.WithContext(ctx, key)
		if err != nil {
			return nil, err
		}
		return rueidislockHeld(cancel), nil
	}, func(err error) bool { return errors.Is(err, rueidislock.ErrNotLocked) })
}

func (c *rueidislockClient) Incr(ctx context.Context, key string) error {
	return c.client.Do(ctx, c.client.B().Incr().Key(key).Build()).Error()
}

func (c *rueidislockClient) Counts() Counts {
	return Counts{Calls: c.calls.Load(), Commands: c.commands.Load()}
}

func (c *rueidislockClient) Close() error {
	c.locker.Close()
	return nil
}

// rueidislockHeld is the cancel function WithContext returns: calling it
// deletes the keys and waits until that is done.
type rueidislockHeld context.CancelFunc

func (h rueidislockHeld) Unlock(context.Context) error {
	h()
	return nil
}
