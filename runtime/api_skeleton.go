package runtime

// TEMPORARY SKELETON: fixes the public API that generated code calls, so the
// generator can be built against it while the runtime is written. The runtime
// owner replaces this file with the real implementation (split into files per
// concept) and deletes it.

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// Kind is a lock family.
type Kind uint8

const (
	Mutex     Kind = iota + 1 // exclusive, reentrant
	Fair                      // exclusive, reentrant, FIFO
	Read                      // shared side of a read/write lock
	Write                     // exclusive side of a read/write lock
	Semaphore                 // at most Permits holders
)

// NoWait as Lock.Wait: try once, do not wait.
const NoWait time.Duration = -1

// Lock describes one lock on one rendered key.
type Lock struct {
	Kind    Kind
	Key     string        // rendered key, without prefix or hash tag
	Lease   time.Duration // 0: the Locker's default lease (30s)
	NoRenew bool          // true: no watchdog; the holder's context gets a deadline inside the lease
	Wait    time.Duration // 0: until ctx is done; > 0: at most this long; NoWait: try once
	Permits int           // Semaphore only, >= 1
}

// Locker takes locks in Redis.
type Locker struct{}

// Option configures a Locker.
type Option func(*Locker)

// New returns a Locker over a go-redis client (single node, Sentinel or Cluster).
func New(rdb redis.UniversalClient, opts ...Option) *Locker { panic("not implemented") }

// Close stops the watchdog and the Pub/Sub connection.
func (l *Locker) Close() error { panic("not implemented") }

// Acquire takes every lock, all-or-nothing, in canonical order.
func (l *Locker) Acquire(ctx context.Context, locks ...Lock) (*Held, error) {
	panic("not implemented")
}

// Held is a set of locks taken by one Acquire call.
type Held struct{}

// Context returns the holder's context.
func (h *Held) Context() context.Context { panic("not implemented") }

// Release gives every lock back.
func (h *Held) Release() error { panic("not implemented") }

// ReleaseInto releases and joins the release error into *errp.
func (h *Held) ReleaseInto(errp *error) { panic("not implemented") }

// Fence returns the fencing token of the innermost lock held by ctx.
func Fence(ctx context.Context) (int64, bool) { panic("not implemented") }
