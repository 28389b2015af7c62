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
	permits int // Semaphore only
}

var (
	lockgenMutex = lockgenKind{setting: "mutex", kind: runtime.Mutex, notes: "runtime.New defaults (lease 30s, watchdog every lease/3, Pub/Sub wake-ups); Kind Mutex"}
	lockgenFair  = lockgenKind{setting: "fair", kind: runtime.Fair, notes: "runtime.New defaults; Kind Fair (FIFO queue, wakes the head only)"}
	// The other kinds, measured only by the idle-waiters workload: read and
	// write are the two sides of one lock per key, so a read waiter waits
	// behind a write holder of the same key and the other way round.
	lockgenRead      = lockgenKind{setting: "read", kind: runtime.Read, notes: "runtime.New defaults; Kind Read (the shared side of a read/write lock)"}
	lockgenWrite     = lockgenKind{setting: "write", kind: runtime.Write, notes: "runtime.New defaults; Kind Write (the exclusive side of a read/write lock)"}
	lockgenSemaphore = lockgenKind{setting: "semaphore", kind: runtime.Semaphore, permits: 1, notes: "runtime.New defaults; Kind Semaphore, Permits 1"}
)

func lockgenPeer(k lockgenKind) Peer {
	return Peer{
		Library: "lockgen", Setting: k.setting, Notes: k.notes,
		AutoRenew: true,
		open: func(cfg Config) (Client, error) {
			return openLockgen(cfg, k)
		},
	}
}

type lockgenClient struct {
	locker  *runtime.Locker
	kind    runtime.Kind
	permits int
	cfg     Config
	incr    func(ctx context.Context, key string) error
	counts  func() Counts
	close   func() error // closes the Redis client, after the Locker
}

func openLockgen(cfg Config, k lockgenKind) (Client, error) {
	rdb, cc := newGoRedisClient(cfg.Addr)
	return &lockgenClient{
		locker: runtime.New(rdb), kind: k.kind, permits: k.permits, cfg: cfg,
		incr:   func(ctx context.Context, key string) error { return rdb.Incr(ctx, key).Err() },
		counts: cc.counts,
		close:  rdb.Close,
	}, nil
}

func (c *lockgenClient) Lock(ctx context.Context, key string) (Held, error) {
	h, err := c.locker.Acquire(ctx, runtime.Lock{Kind: c.kind, Key: key, Lease: c.cfg.Lease, Permits: c.permits})
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
