//go:build !nolockgen

package peers

import (
	"context"

	"github.com/lockgen/lockgen/runtime"
)

// lockgen is driven through its imperative API, which is exactly what the
// generated wrappers call. Both exclusive kinds are measured: mutex (the
// default choice) and fair (FIFO handoff).

type lockgenKind struct {
	setting string
	kind    runtime.Kind
	notes   string
}

var (
	lockgenMutex = lockgenKind{"mutex", runtime.Mutex, "runtime.New defaults (lease 30s, watchdog every lease/3, Pub/Sub wake-ups); Kind Mutex"}
	lockgenFair  = lockgenKind{"fair", runtime.Fair, "runtime.New defaults; Kind Fair (FIFO queue, wakes the head only)"}
)

func lockgenPeer(k lockgenKind) Peer {
	return Peer{
		Library: "lockgen", Setting: k.setting, Notes: k.notes,
		AutoRenew: true,
		open: func(cfg Config) (Client, error) {
			return openLockgen(cfg, k.kind)
		},
	}
}

type lockgenClient struct {
	locker *runtime.Locker
	kind   runtime.Kind
	cfg    Config
	incr   func(ctx context.Context, key string) error
	counts func() Counts
	close  func() error // closes the Redis client, after the Locker
}

func openLockgen(cfg Config, kind runtime.Kind) (Client, error) {
	rdb, cc := newGoRedisClient(cfg.Addr)
	return &lockgenClient{
		locker: runtime.New(rdb), kind: kind, cfg: cfg,
		incr:   func(ctx context.Context, key string) error { return rdb.Incr(ctx, key).Err() },
		counts: cc.counts,
		close:  rdb.Close,
	}, nil
}

func (c *lockgenClient) Lock(ctx context.Context, key string) (Held, error) {
	h, err := c.locker.Acquire(ctx, runtime.Lock{Kind: c.kind, Key: key, Lease: c.cfg.Lease})
	if err != nil {
		return nil, err
	}
	return lockgenHeld{h}, nil
}

func (c *lockgenClient) Incr(ctx context.Context, key string) error { return c.incr(ctx, key) }

func (c *lockgenClient) Counts() Counts { return c.counts() }

func (c *lockgenClient) Close() error {
	err := c.locker.Close()
	if cerr := c.close(); err == nil {
		err = cerr
	}
	return err
}

type lockgenHeld struct{ h *runtime.Held }

func (h lockgenHeld) Unlock(context.Context) error { return h.h.Release() }
