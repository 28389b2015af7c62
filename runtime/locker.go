package runtime

import (
	"sync"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/goredisbackend"
	"github.com/lockgen/lockgen/internal/callqueue"
	"github.com/lockgen/lockgen/internal/wakeup"
	"github.com/lockgen/lockgen/internal/watchdog"
	"github.com/redis/go-redis/v9"
)

// Locker takes locks in Redis for one process. It owns one watchdog
// goroutine that renews every lock it holds and one Pub/Sub connection per
// Redis node that carries the wake-ups of all its waiters. Make one per
// process (per Redis deployment) and share it; it is safe for concurrent use.
type Locker struct {
	backend        backend.Backend // given, wrapped by options and withPermissionErrors
	given          backend.Backend // as given, for Backend() and WithRestartGuard
	prefix         string
	lease          time.Duration
	observers      []ContextObserver
	replicas       int
	replicaTimeout time.Duration
	nextHolder     func() string
	releaseTimeout time.Duration
	waiterWindow   time.Duration
	// unreachableTimeout bounds a run of failed attempts of one Acquire
	// (acquire_recover.go).
	unreachableTimeout time.Duration
	caps               backend.Caps         // what the backend states about itself
	queue              *callqueue.Coalescer // where a call may wait for a pipeline (coalesced), or nil
	optErr             error                // a bad Option, reported by every Acquire
	guardErr           error                // a bad WithRestartGuard (restartguard.go)

	publish   string
	leaseMs   string // lease in ms, ARGV[2] (argv.go)
	windowMs  string // waiterWindow in ms, the usual ARGV[4] of mutex_acquire
	constArgs []any  // the above boxed, and "0"
	wakeups   *wakeup.Lines
	dog       *watchdog.Watchdog
	holds     holds
	cleanups  cleanups
	// Deadlines shared by the calls bounded by the release timeout and by
	// the default lease (bound.go).
	releaseBound, leaseBound sharedBound

	closeOnce sync.Once
	closed    chan struct{}
	closeErr  error
}

// New returns a Locker over a go-redis client: a *redis.Client (single node
// or Sentinel failover) or a *redis.ClusterClient, through
// goredisbackend.New. The Locker does not close rdb.
func New(rdb redis.UniversalClient, opts ...Option) *Locker {
	return NewWithBackend(goredisbackend.New(rdb), opts...)
}

// NewWithBackend returns a Locker over any Backend (package embedded has an
// in-process one). Close closes the backend.
func NewWithBackend(b backend.Backend, opts ...Option) *Locker {
	l := &Locker{
		backend:            b,
		given:              b,
		prefix:             "lockgen:",
		lease:              30 * time.Second,
		releaseTimeout:     5 * time.Second,
		waiterWindow:       500 * time.Millisecond,
		unreachableTimeout: defaultUnreachableTimeout,
		closed:             make(chan struct{}),
	}
	l.backend, l.queue = coalesced(b) // before the options: one that wraps b drops the queue
	for _, o := range opts {
		o(l)
	}
	if l.nextHolder == nil {
		l.nextHolder = defaultHolderIDs()
	}
	l.backend = withPermissionErrors(l.backend)
	l.caps = l.backend.Caps()
	l.optErr = l.checkOptions()
	l.publish = b.PublishCommand()
	l.initArgs()
	l.releaseBound.D, l.leaseBound.D = l.releaseTimeout, l.lease
	l.wakeups = wakeup.New(l.backend, permissionDenied)
	l.dog = newWatchdog(l)
	l.holds.init()
	l.initCleanups()
	return l
}

// Close stops the watchdog and the Pub/Sub connections, lets background
// clean-ups finish for at most half a second (or the release timeout, if
// shorter), and closes the backend. Clean-ups still pending then are
// abandoned, reported as EventCleanedUp with an error wrapping ErrClosed:
// they are best-effort, and what they would have given back expires with
// its lease anyway. Waiting acquires stop with ErrClosed; locks still held are no
// longer renewed, so their holders' contexts are cancelled with a cause
// that wraps ErrLockLost and ErrClosed. Close is idempotent.
func (l *Locker) Close() error {
	l.closeOnce.Do(func() {
		close(l.closed)
		l.wakeups.Close()
		l.dog.Stop()
		l.cleanups.Close()
		l.closeErr = l.backend.Close()
	})
	return l.closeErr
}

// Backend returns the backend the Locker runs its scripts on.
func (l *Locker) Backend() backend.Backend { return l.given }

func (l *Locker) isClosed() bool {
	select {
	case <-l.closed:
		return true
	default:
		return false
	}
}
