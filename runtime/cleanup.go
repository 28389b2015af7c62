package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/lockgen/lockgen/internal/callerr"
	"github.com/lockgen/lockgen/internal/callqueue"
)

// A call whose outcome is unknown (no reply in time, a dropped connection,
// a failed WAIT) may have taken the lock, or registered its holder id as a
// waiter. So may a release that failed. The caller has returned; nothing
// may stay held in its name. The clean-up gives back whatever that holder
// id may have on the lock, by running the kind's release script for it,
// which is idempotent and also withdraws a waiter's registration (holder
// ids are never reused, so this cannot touch anyone else's hold):
//
//  1. It waits until the call in doubt has returned (go-redis's own
//     timeouts bound that). From then on, the call can no longer be sent
//     again; and since the connection it was on was closed with a reset
//     (resetclose.go), none of its bytes is on the way either, except
//     those Redis's kernel had acknowledged, which wait in Redis's input
//     buffer.
//  2. It runs the release until a reply arrives, with backoff.
//  3. If the call in doubt ended without a reply, a command of it may have
//     been read by Redis in the same event-loop pass as that release and
//     run after it, so one more release, sent after the first one's reply,
//     confirms that nothing is left.
//
// Nothing is cleaned where nothing can be in Redis: a call whose dial
// failed was never sent, and one that Redis refused outright (NOAUTH,
// WRONGPASS, a NOPERM on the command itself) did not run, so an acquire
// that ended so, by a holder id that no busy reply registered, leaves no
// clean-up at all.
//
// It gives up once the lease would have ended anyway, counted from when the
// call in doubt returned. Its end is reported as EventCleanedUp.
//
// The clean-ups are bounded whatever the outage: one per holder id and
// lock at a time (a second request for the same one joins the first), all
// of them run by a single goroutine, started when there is work and ended
// when there is none, which sends the releases that are due together, as
// one batch of at most maxCleanupBatch calls. While releases fail without
// being sent (Redis cannot be reached), every clean-up pauses, so an
// outage costs one attempt per pause, not one per clean-up.

// Pacing and bounds of the clean-ups.
const (
	cleanupBackoffMin = 10 * time.Millisecond
	cleanupBackoffMax = time.Second
	// cleanupPoll is how often the worker looks whether calls in doubt
	// have returned.
	cleanupPoll = 20 * time.Millisecond
	// maxCleanupBatch bounds the releases sent in one batch.
	maxCleanupBatch = 256
	// closeCleanupGrace is how long Close lets the clean-ups in flight
	// finish (one round trip or two to a server that answers) before it
	// abandons them: they are best-effort, the lease bounds what they
	// would give back.
	closeCleanupGrace = 500 * time.Millisecond
)

type cleanupKey struct {
	base   string
	kind   Kind
	holder string
}

// cleanupTask is the clean-up of one holder id on one lock.
type cleanupTask struct {
	spec     *lockSpec
	holder   string
	waitFor  []*pending // calls in doubt that have not returned yet
	mayHold  bool       // something of holder may be in Redis
	confirm  bool       // a call ended without a reply: two replies are needed
	replies  int
	giveUpAt time.Time // zero until every call in doubt has returned
	due      time.Time
	backoff  time.Duration
	sending  bool
	lastErr  error
}

// cleanups is the Locker's queue of clean-ups and its worker.
type cleanups struct {
	mu      sync.Mutex
	tasks   map[cleanupKey]*cleanupTask
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
	// claimed counts the acquisitions under way for a holder id that other
	// calls share (claim); their clean-ups wait.
	claimed map[cleanupKey]int
	applied chan struct{} // closed and replaced when a batch's replies are recorded
}

func (c *cleanups) init() {
	c.tasks = map[cleanupKey]*cleanupTask{}
	c.claimed = map[cleanupKey]int{}
	c.applied = make(chan struct{})
	c.kick = make(chan struct{}, 1)
	c.stop = make(chan struct{})
	c.ctx, c.cancel = context.WithCancel(context.Background())
}

// errNeverSent is the error of the pending of a call taken out of a queue
// before it was sent (coalesce_within.go).
var errNeverSent = callerr.ErrNeverSent

// didNotRun reports whether err says a call certainly did not run: it was
// never sent, or Redis refused the command as a whole.
func didNotRun(err error) bool {
	return errors.Is(err, errNeverSent) || callerr.NotSent(err) || refusedOutright(err)
}

// cleanUp queues the clean-up of holder on spec, once p (the call in
// doubt; returned if there is none) has returned. mayHold says that holder
// may have something in Redis whatever p did (a busy reply registered it,
// or it holds the lock); otherwise it depends on p.
func (l *Locker) cleanUp(spec *lockSpec, holder string, p *pending, mayHold bool) {
	c := &l.cleanups
	key := cleanupKey{spec.base, spec.Kind, holder}
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		l.observe(context.Background(), Event{Kind: EventCleanedUp, Lock: spec.withLease(), Holder: holder, Err: fmt.Errorf("lockgen: clean-up of %s for %s: %w", spec, holder, ErrClosed)})
		return
	}
	t := c.tasks[key]
	if t == nil {
		t = &cleanupTask{spec: spec, holder: holder}
		if len(c.tasks) == 0 {
			c.idle = make(chan struct{})
		}
		c.tasks[key] = t
	}
	t.mayHold = t.mayHold || mayHold
	t.waitFor = append(t.waitFor, p)
	t.replies, t.giveUpAt = 0, time.Time{} // a joining request starts it over
	start := !c.working
	c.working = true
	c.mu.Unlock()
	if start {
		go l.cleanupWorker()
	} else {
		select {
		case c.kick <- struct{}{}:
		default:
		}
	}
}

// releaseNow runs the release script for holder once, at most bound, and
// reports EventCleanedUp if Redis answered and confirm is not needed. It
// returns nil then, or the call to hand to cleanUp.
func (l *Locker) releaseNow(spec *lockSpec, holder string, bound time.Duration, confirm bool) *pending {
	if confirm {
		return callqueue.Finished(errNoReply)
	}
	call := spec.call(spec.Kind.scripts().release, holder, l.publish)
	now := time.Now()
	_, _, p, err := l.evalBounded(context.Background(), callBounds{now: now, deadline: now.Add(bound), orphan: l.releaseTimeout}, call, false)
	if err != nil {
		return p
	}
	l.observe(context.Background(), Event{Kind: EventCleanedUp, Lock: spec.withLease(), Holder: holder})
	return nil
}

// wait lets the clean-ups in flight finish for at most d, then abandons
// those left (EventCleanedUp with ErrClosed) and cancels the batch in
// flight; the worker ends with it. Clean-ups requested later end at once.
func (c *cleanups) wait(l *Locker, d time.Duration) {
	c.mu.Lock()
	idle := c.idle
	c.mu.Unlock()
	if idle != nil {
		t := time.NewTimer(d)
		select {
		case <-idle:
		case <-t.C:
		}
		t.Stop()
	}
	c.mu.Lock()
	c.stopped = true
	close(c.stop)
	c.cancel()
	left := make([]*cleanupTask, 0, len(c.tasks))
	for _, t := range c.tasks {
		left = append(left, t)
	}
	clear(c.tasks)
	c.mu.Unlock()
	for _, t := range left {
		l.cleanedUp(t, errors.Join(t.lastErr, ErrClosed))
	}
}

// cleanedUp reports the end of t.
func (l *Locker) cleanedUp(t *cleanupTask, err error) {
	if err != nil {
		err = fmt.Errorf("lockgen: clean-up of %s for %s: %w", t.spec, t.holder, err)
	}
	l.observe(context.Background(), Event{Kind: EventCleanedUp, Lock: t.spec.withLease(), Holder: t.holder, Err: err})
}

// claim holds back the clean-up of key while an acquisition for the same
// holder id and lock is under way, and waits for a release of it already
// sent: the read side a writer takes under its own holder id (reentry.go)
// is shared by the nested Acquires of its chain, and the clean-up left by
// one that failed must not give back what a sibling is taking. Once the
// sibling holds it, the clean-up ends without a release (collect); if the
// sibling fails too, it joins the clean-up. unclaim ends the claim.
func (c *cleanups) claim(key cleanupKey) {
	for range 100 { // each wait is a batch, bounded by the release timeout
		c.mu.Lock()
		t := c.tasks[key]
		if t == nil || !t.sending {
			c.claimed[key]++
			c.mu.Unlock()
			return
		}
		applied := c.applied
		c.mu.Unlock()
		<-applied
	}
}

func (c *cleanups) unclaim(key cleanupKey) {
	c.mu.Lock()
	if c.claimed[key]--; c.claimed[key] <= 0 {
		delete(c.claimed, key)
	}
	c.mu.Unlock()
	select {
	case c.kick <- struct{}{}:
	default:
	}
}
