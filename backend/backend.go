package backend

import (
	"context"
	"time"

	"github.com/lockgen/lockgen/lua"
)

// Call is one script invocation: the script, its KEYS and its ARGV.
type Call struct {
	Script *lua.Script
	Keys   []string
	Args   []string

	// vals is Keys then Args boxed, when the runtime made them once for
	// many calls (WithBoxed); nil otherwise.
	vals []any
}

// WithBoxed returns c carrying vals, its Keys then its Args each already
// in an any: the runtime boxes the values a holder's calls share once per
// acquisition, so that a backend that sends a []any per command
// (Caps.BoxedArgs) need not box them again for every call. vals is not
// copied and must not change afterwards; nil drops what c carried.
func (c Call) WithBoxed(vals []any) Call {
	c.vals = vals
	return c
}

// Boxed returns c's KEYS then ARGV as WithBoxed gave them, if c carries
// them and they still are c's: a Backend that wraps another may pass on a
// Call whose Keys or Args it replaced, and then Boxed reports false.
// Equal strings compare in a pointer check when they share their bytes,
// as these do, so the check costs no allocation and little time.
func (c *Call) Boxed() ([]any, bool) {
	if c.vals == nil || len(c.vals) != len(c.Keys)+len(c.Args) {
		return nil, false
	}
	for i, k := range c.Keys {
		if c.vals[i] != k {
			return nil, false
		}
	}
	for i, a := range c.Args {
		if c.vals[len(c.Keys)+i] != a {
			return nil, false
		}
	}
	return c.vals, true
}

// Reply is the outcome of one Call of a batch: the script's reply (int64,
// string, []any of those, or nil) or the error.
type Reply struct {
	Value any
	Err   error
}

// PayloadUnsubscribed is what a Backend delivers on a channel when the
// server ended the subscription on its own, e.g. because a Cluster slot
// moved: the channel is no longer subscribed; the Locker wakes its waiters
// and subscribes again on the slot's current owner. No wake message has
// this payload.
const PayloadUnsubscribed = "unsubscribed"

// Backend is what a Locker needs from Redis. runtime.New wraps a go-redis
// client in one (goredisbackend.New); package embedded provides one that runs the same
// scripts in process. Implement it to put lockgen on another client.
//
// Every method must be safe for concurrent use and bounded by its context.
type Backend interface {
	// Eval runs one script call: EVALSHA, and on a NOSCRIPT error EVAL once.
	// Error replies of the script come back as errors.
	Eval(ctx context.Context, c Call) (any, error)

	// EvalBatch runs many calls with as few round trips as it can: one
	// pipeline per node (EVALSHA, then one more pipeline of EVALs for those
	// that failed with NOSCRIPT). It returns one Reply per call, in order.
	EvalBatch(ctx context.Context, calls []Call) []Reply

	// EvalWait runs c and then WAIT replicas timeout on the same
	// connection, so that WAIT counts the replicas that have c's writes. It
	// returns the script's reply and the number of replicas that
	// acknowledged. A backend without replicas returns 0 acknowledgements.
	EvalWait(ctx context.Context, c Call, replicas int, timeout time.Duration) (reply any, acked int, err error)

	// Subscribe starts delivering the payloads published on channel (by the
	// command PublishCommand names) to deliver, and returns once the server
	// has confirmed the subscription, so that nothing published after
	// Subscribe returns is missed. The Locker calls it at most once per
	// channel until it calls the returned unsubscribe, and never for two
	// channels at once. deliver must not block; the backend calls it from
	// its receiving goroutine. A backend should use one connection per node
	// for all channels, and after a reconnection deliver "all" on every
	// channel, since wake messages may have been lost meanwhile. It
	// delivers PayloadUnsubscribed when the server ended the subscription
	// on its own, e.g. a Cluster slot moved: the channel is no longer
	// subscribed (its unsubscribe need not be called, and does nothing),
	// and a new Subscribe of it goes to the slot's current owner. The
	// Locker then wakes its waiters and subscribes again. Subscribe
	// returns, with an error, when ctx ends; a backend may bound it by a
	// timeout of its own as well.
	Subscribe(ctx context.Context, channel string, deliver func(payload string)) (unsubscribe func(), err error)

	// PublishCommand is the command scripts publish wake messages with
	// (ARGV[3]): "PUBLISH", or "SPUBLISH" on Redis Cluster.
	PublishCommand() string

	// Caps states how the backend's calls end and which optional services
	// it offers; the zero Caps is always correct.
	Caps() Caps

	// Close ends the subscriptions. It does not close the client the
	// backend was built on, which belongs to the caller.
	Close() error
}

// Caps is what a Backend states about itself beyond its methods: how its
// calls end, and the optional services it offers. The zero Caps is always
// correct, only slower: the Locker then bounds each call it may have to
// abandon on a goroutine of its own, learns of a lost lock at its next
// renewal, and pings with a read-only script. A Backend that wraps another
// passes the inner one's Caps on, changing what its wrapping changes; one
// that embeds the inner Backend does so without a line of code.
type Caps struct {
	// CallBound is the longest one call can take by the client's own
	// timeouts and retries (0: unknown, as when they are off).
	CallBound time.Duration

	// HonorsDeadline says that every call (Eval, EvalBatch, EvalWait)
	// returns by its context's deadline by itself, as rueidis's do: the
	// Locker then runs calls on the caller's goroutine with the deadline on
	// the context. Unless the backend is go-redis's (which queues calls
	// itself) or a Quorum, the Locker also puts a coalescer in front of it:
	// a call that finds a dozen round trips under way and that only its
	// deadline can end joins the next EvalBatch, which runs until the
	// earliest deadline of its calls. State it only if the promise holds: a
	// call that overstays its deadline would hold up an acquire or a
	// release past the bounds the Locker promises.
	HonorsDeadline bool

	// BoxedArgs says that the backend sends the KEYS and ARGV the runtime
	// boxed once for many calls, when a Call carries them (this
	// repository's go-redis backend does); without it the runtime boxes
	// nothing.
	BoxedArgs bool

	// Quorum says that the backend stands for a majority of independent
	// servers (RedLock): the Locker over it supports the Mutex kind only,
	// and refuses WithReplicas, the majority being its replication.
	Quorum bool

	// WatchMasters, if not nil, learns when the master serving some keys
	// changes: a failover, a server that restarted without its data, a
	// Cluster slot that moved. A Locker calls it once, when it is made,
	// with the prefix of its keys and channels (a backend may subscribe to
	// a channel of its own under it, which an ACL written for the Locker
	// allows). The backend then calls changed, from any goroutine and
	// without blocking on it, with a predicate that tells the keys
	// concerned, and the Locker verifies the locks it holds on them at once
	// instead of at their next renewal, up to a third of the lease later.
	WatchMasters func(prefix string, changed func(affects func(key string) bool))

	// Ping, if not nil, returns nil once every connection the Locker
	// depends on answered (Locker.Ping): the one scripts run on, every
	// master on a Cluster, and the Pub/Sub connections that carry wake-ups.
	Ping func(ctx context.Context) error
}
