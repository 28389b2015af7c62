package peers

import (
	"context"
	"errors"
	"time"
)

// Peer is one lock library in one configuration.
type Peer struct {
	Library string // "lockgen", "redsync", "redislock", "rueidislock"
	Setting string // "default", "tuned", "mutex", "fair"
	Notes   string // the options that make this setting, for the report

	// Polls is true when a waiter retries on a timer instead of being
	// woken by the server.
	Polls bool
	// AutoRenew is true when the library extends a held lease on its own.
	AutoRenew bool

	open func(cfg Config) (Client, error)
}

// Name is "library/setting", unique among All().
func (p Peer) Name() string { return p.Library + "/" + p.Setting }

// Open connects a client of this peer to the Redis server at cfg.Addr.
func (p Peer) Open(cfg Config) (Client, error) { return p.open(cfg) }

// Config is what the harness fixes for every peer in a workload.
type Config struct {
	Addr string
	// Lease is the lock's time to live. Zero means the library's default
	// (redislock has none: it then uses DefaultLease).
	Lease time.Duration
	// ManualRenew asks the adapters of libraries without auto-renewal to
	// extend each held lock every Lease/3 from a goroutine per lock, the way
	// their documentation leaves it to the user. Peers with AutoRenew
	// ignore it: they always renew.
	ManualRenew bool
}

// DefaultLease is used where a library requires a lease and has no default.
const DefaultLease = 10 * time.Second

// Client is a connected lock client.
type Client interface {
	// Lock waits until the lock on key is held or ctx is done. Libraries
	// that give up after a bounded number of retries are called again
	// until ctx is done, as a caller that must get the lock would do.
	Lock(ctx context.Context, key string) (Held, error)
	// Incr runs INCR key on the client the library talks to Redis with:
	// the one command of the many-keys workload's critical section, so
	// that a pipelining client pipelines it with the lock's own calls.
	Incr(ctx context.Context, key string) error
	// Counts is what this client has sent to Redis so far.
	Counts() Counts
	Close() error
}

// Held is one held lock.
type Held interface {
	Unlock(ctx context.Context) error
}

// ErrUnavailable marks a peer that cannot run in this build: lockgen's when
// the harness is built with -tags nolockgen (for when a half-edited runtime
// does not compile); the report then says so instead of showing numbers.
var ErrUnavailable = errors.New("peers: peer unavailable")

// All lists every peer configuration, lockgen first.
func All() []Peer {
	return []Peer{
		lockgenPeer(lockgenMutex),
		lockgenPeer(lockgenFair),
		redsyncDefault(),
		redsyncTuned(),
		redislockDefault(),
		redislockTuned(),
		rueidislockDefault(),
		rueidislockTuned(),
	}
}

// Pipelining lists the configurations that only the many-keys workload
// measures: lockgen on the rueidis backend and on go-redis's AutoPipeline,
// and redislock on go-redis's AutoPipeline. Concurrency is where pipelining
// pays; on one hot key or one goroutine they would only lengthen the run.
func Pipelining() []Peer {
	return []Peer{
		lockgenRueidisPeer(lockgenMutex),
		lockgenRueidisPeer(lockgenFair),
		lockgenAutoPipelinePeer(lockgenMutex),
		redislockAutoPipeline(),
	}
}

// Everything is All and Pipelining.
func Everything() []Peer { return append(All(), Pipelining()...) }

// ShortIDs lists the configurations that only the memory workload
// measures: lockgen's mutex with short holder ids (WithHolderIDs).
func ShortIDs() []Peer { return []Peer{lockgenShortIDsPeer()} }

// OtherKinds lists lockgen's lock kinds that no other library offers on
// its own: the read and write sides of a read/write lock and a semaphore of
// one permit. Only the idle-waiters workload measures them, a waiter of one
// kind behind a holder of the same or the other side. They are not in
// Everything: two readers do not exclude each other.
func OtherKinds() []Peer {
	return []Peer{lockgenPeer(lockgenRead), lockgenPeer(lockgenWrite), lockgenPeer(lockgenSemaphore)}
}

// ByName returns the peer whose Name() is name, among Everything,
// OtherKinds and ShortIDs.
func ByName(name string) (Peer, bool) {
	for _, p := range append(append(Everything(), OtherKinds()...), ShortIDs()...) {
		if p.Name() == name {
			return p, true
		}
	}
	return Peer{}, false
}

// retryUntilDone calls try until it succeeds, fails with an error that
// retryable does not accept, or ctx is done.
func retryUntilDone(ctx context.Context, try func() (Held, error), retryable func(error) bool) (Held, error) {
	for {
		h, err := try()
		if err == nil {
			return h, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if !retryable(err) {
			return nil, err
		}
	}
}
