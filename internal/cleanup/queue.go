package cleanup

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/internal/callerr"
	"github.com/lockgen/lockgen/internal/callqueue"
)

// Pacing and bounds of the clean-ups.
const (
	backoffMin = 10 * time.Millisecond
	backoffMax = time.Second
	// poll is how often the worker looks whether calls in doubt have
	// returned.
	poll = 20 * time.Millisecond
	// MaxBatch bounds the releases sent in one batch.
	MaxBatch = 256
	// closeGrace is how long Close lets the clean-ups in flight finish
	// (one round trip or two to a server that answers) before it abandons
	// them: they are best-effort, the lease bounds what they would give
	// back.
	closeGrace = 500 * time.Millisecond
)

// Key names one clean-up: a holder id on a lock. Lock and Mode are the
// caller's (the runtime's: the lock's base key, and its kind, since the
// read and write sides of a lock share a base).
type Key struct {
	Lock   string
	Mode   uint8
	Holder string
}

// Config is what a Queue needs from its owner.
type Config struct {
	Backend backend.Backend
	// Timeout bounds one batch of releases.
	Timeout time.Duration
	// HeldLocally reports whether the lock of a Key is held again here;
	// such a clean-up ends without a release.
	HeldLocally func(Key) bool
	// Denied reports an error that retrying cannot help (a permission
	// denial the owner names), besides those RefusedOutright knows.
	Denied func(error) bool
	// GaveUp is joined into the error of a clean-up that gave up.
	GaveUp error
}

// Request is the clean-up of one holder id on one lock.
type Request struct {
	Key Key
	// Release is the idempotent call that gives back whatever Key's
	// holder has on the lock.
	Release backend.Call
	// Lease bounds the clean-up, from when the call in doubt returned.
	Lease time.Duration
	// Ended is called once, when the clean-up ends: err is nil if the
	// release was answered, else why it was not. It is not called for a
	// clean-up that ends with nothing to send: the call in doubt did not
	// run (and mayHold was false), or HeldLocally said the lock is held.
	Ended func(err error)
}

// task is a Request under way.
type task struct {
	Request
	waitFor  []*callqueue.Pending // calls in doubt that have not returned yet
	mayHold  bool                 // something of the holder may be in Redis
	confirm  bool                 // a call ended without a reply: two replies are needed
	replies  int
	giveUpAt time.Time // zero until every call in doubt has returned
	due      time.Time
	backoff  time.Duration
	sending  bool
	lastErr  error
}

// Queue holds the clean-ups and runs their worker. Use it after Init.
type Queue struct {
	cfg     Config
	mu      sync.Mutex
	tasks   map[Key]*task
	working bool          // the worker goroutine runs
	kick    chan struct{} // wakes the worker (buffered, 1)
	idle    chan struct{} // closed when tasks becomes empty; nil while it is
	stopped bool
	stop    chan struct{} // closed by Close: the worker ends
	ctx     context.Context
	cancel  context.CancelFunc // cancels ctx, the context of the releases, at Close
	// pauseUntil: a release could not be sent (no connection to Redis);
	// no release goes out before then.
	pauseUntil time.Time
	pause      time.Duration
	// claimed counts the acquisitions under way for a Key (Claim); their
	// clean-ups wait.
	claimed map[Key]int
	applied chan struct{} // closed and replaced when a batch's replies are recorded
}

// Init readies q.
func (q *Queue) Init(cfg Config) {
	q.cfg = cfg
	q.tasks = map[Key]*task{}
	q.claimed = map[Key]int{}
	q.applied = make(chan struct{})
	q.kick = make(chan struct{}, 1)
	q.stop = make(chan struct{})
	q.ctx, q.cancel = context.WithCancel(context.Background())
}

// DidNotRun reports whether err says a call certainly did not run: it was
// never sent, or Redis refused the command as a whole.
func DidNotRun(err error) bool {
	return errors.Is(err, callerr.ErrNeverSent) || callerr.NotSent(err) || RefusedOutright(err)
}

// Add queues r, to run once p (the call in doubt; callqueue.Returned if
// there is none) has returned. mayHold says that the holder may have
// something in Redis whatever p did (a busy reply registered it, or it
// holds the lock); otherwise it depends on p. After Close, r ends at once
// with callerr.ErrClosed.
func (q *Queue) Add(r Request, p *callqueue.Pending, mayHold bool) {
	q.mu.Lock()
	if q.stopped {
		q.mu.Unlock()
		r.Ended(callerr.ErrClosed)
		return
	}
	t := q.tasks[r.Key]
	if t == nil {
		t = &task{Request: r}
		if len(q.tasks) == 0 {
			q.idle = make(chan struct{})
		}
		q.tasks[r.Key] = t
	}
	t.mayHold = t.mayHold || mayHold
	t.waitFor = append(t.waitFor, p)
	t.replies, t.giveUpAt = 0, time.Time{} // a joining request starts it over
	start := !q.working
	q.working = true
	q.mu.Unlock()
	if start {
		go q.work()
	} else {
		q.wake()
	}
}

func (q *Queue) wake() {
	select {
	case q.kick <- struct{}{}:
	default:
	}
}

// Close lets the clean-ups in flight finish for a short grace (at most
// the batch timeout), then abandons those left (Ended with an error
// wrapping callerr.ErrClosed) and cancels the batch in flight; the worker
// ends with it. Requests added later end at once. Close is idempotent.
func (q *Queue) Close() {
	q.mu.Lock()
	idle := q.idle
	q.mu.Unlock()
	if idle != nil {
		t := time.NewTimer(min(closeGrace, q.cfg.Timeout))
		select {
		case <-idle:
		case <-t.C:
		}
		t.Stop()
	}
	q.mu.Lock()
	if q.stopped {
		q.mu.Unlock()
		return
	}
	q.stopped = true
	close(q.stop)
	q.cancel()
	left := make([]*task, 0, len(q.tasks))
	for _, t := range q.tasks {
		left = append(left, t)
	}
	clear(q.tasks)
	q.mu.Unlock()
	for _, t := range left {
		t.Ended(errors.Join(t.lastErr, callerr.ErrClosed))
	}
}

// Claim holds back the clean-up of key while an acquisition under the
// same key is under way, and first waits for a release of it already
// sent: a holder id the runtime shares between calls (the read side a
// writer takes under its own id) must not be given back by the clean-up
// one of them left while another is taking it. Once that one holds it,
// the clean-up ends without a release (HeldLocally); if it fails too, it
// joins the clean-up. Unclaim ends the claim.
func (q *Queue) Claim(key Key) {
	for range 100 { // each wait is a batch, bounded by the batch timeout
		q.mu.Lock()
		t := q.tasks[key]
		if t == nil || !t.sending {
			q.claimed[key]++
			q.mu.Unlock()
			return
		}
		applied := q.applied
		q.mu.Unlock()
		<-applied
	}
}

// Unclaim ends a Claim.
func (q *Queue) Unclaim(key Key) {
	q.mu.Lock()
	if q.claimed[key]--; q.claimed[key] <= 0 {
		delete(q.claimed, key)
	}
	q.mu.Unlock()
	q.wake()
}
