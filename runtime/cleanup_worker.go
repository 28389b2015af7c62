package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/internal/callerr"
)

// cleanupWorker runs the clean-ups (cleanup.go) until none is left, or
// Close. There is at most one at a time.
func (l *Locker) cleanupWorker() {
	c := &l.cleanups
	for {
		batch, ended, wake, exit := c.collect(time.Now(), l.holds.has)
		for _, e := range ended {
			l.cleanedUp(e.t, e.err)
		}
		if exit {
			return
		}
		if len(batch) > 0 {
			l.giveBackBatch(batch)
			continue
		}
		t := time.NewTimer(wake)
		select {
		case <-t.C:
		case <-c.kick:
		case <-c.stop:
		}
		t.Stop()
	}
}

// endedTask is a clean-up that ended, with its error (nil: given back).
type endedTask struct {
	t   *cleanupTask
	err error
}

func (t *cleanupTask) key() cleanupKey { return cleanupKey{t.spec.base, t.spec.Kind, t.holder} }

// collect returns the clean-ups whose release is due now, those that
// ended, and how long to sleep if there is nothing to send; exit is true
// (and the worker no longer counted) once there is nothing left, or after
// Close.
//
// A clean-up whose holder id holds the lock here (held says so) ends
// without a release: the read side a writer takes under its own holder id
// (reentry.go) may be held by one nested Acquire while a sibling that
// failed left the same holder id to the clean-up, and the hold's own
// release gives it back in the end.
func (c *cleanups) collect(now time.Time, held func(holdKey) bool) (batch []*cleanupTask, ended []endedTask, wake time.Duration, exit bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		c.working = false
		return nil, nil, 0, true
	}
	next := now.Add(time.Hour)
	limit := maxCleanupBatch
	if c.pause > 0 {
		limit = 1 // the last releases could not be sent: one probes for Redis
	}
	for key, t := range c.tasks {
		if t.sending {
			continue
		}
		if !t.settle() {
			next = earliest(next, now.Add(cleanupPoll))
			continue
		}
		if !t.mayHold || held(holdKey(key)) {
			delete(c.tasks, key) // nothing of holder can be in Redis, or a hold here owns it
			continue
		}
		if c.claimed[key] > 0 {
			next = earliest(next, now.Add(cleanupPoll)) // a sibling is acquiring (claim)
			continue
		}
		if t.giveUpAt.IsZero() {
			t.giveUpAt, t.due = now.Add(t.spec.lease), now
		}
		if !now.Before(t.giveUpAt) {
			delete(c.tasks, key)
			ended = append(ended, endedTask{t, fmt.Errorf("gave up when its lease would have ended: %w", errors.Join(t.lastErr, ErrNotHeld))})
			continue
		}
		if at := later(t.due, c.pauseUntil); now.Before(at) {
			next = earliest(next, at)
			continue
		}
		if len(batch) < limit {
			t.sending = true
			batch = append(batch, t)
		}
	}
	if len(c.tasks) == 0 {
		c.working = false
		close(c.idle)
		c.idle = nil
		return nil, ended, 0, true
	}
	return batch, ended, max(next.Sub(now), 0), false
}

// settle drops the calls in doubt that have returned, learning from each
// what holder may have in Redis, and reports whether none is left.
func (t *cleanupTask) settle() bool {
	kept := t.waitFor[:0]
	for _, p := range t.waitFor {
		select {
		case <-p.Done:
			if p.Err == nil || !didNotRun(p.Err) {
				t.mayHold = true // it ran, or may have
			}
			if p.Err != nil && !didNotRun(p.Err) {
				t.confirm = true // and without a reply
			}
		default:
			kept = append(kept, p)
		}
	}
	clear(t.waitFor[len(kept):])
	t.waitFor = kept
	return len(kept) == 0
}

// giveBackBatch sends the releases of batch together, bounded by the
// release timeout and cancelled by Close, and records the replies.
func (l *Locker) giveBackBatch(batch []*cleanupTask) {
	calls := make([]backend.Call, len(batch))
	for i, t := range batch {
		calls[i] = t.spec.call(t.spec.Kind.scripts().release, t.holder, l.publish)
	}
	ctx, cancel := context.WithTimeout(l.cleanups.ctx, l.releaseTimeout)
	replies := l.backend.EvalBatch(ctx, calls)
	cancel()
	for _, e := range l.cleanups.apply(batch, replies, time.Now()) {
		l.cleanedUp(e.t, e.err)
	}
}

// apply records the replies to the releases of batch and returns the
// clean-ups that ended.
func (c *cleanups) apply(batch []*cleanupTask, replies []backend.Reply, now time.Time) (ended []endedTask) {
	c.mu.Lock()
	defer c.mu.Unlock()
	unsent := false
	for i, t := range batch {
		t.sending = false
		if c.tasks[t.key()] != t {
			continue // abandoned by Close
		}
		err := errors.New("lockgen: no reply in the batch")
		if i < len(replies) {
			err = replies[i].Err
		}
		switch {
		case err == nil:
			c.pause = 0
			if len(t.waitFor) > 0 {
				continue // joined by a call still in doubt: it starts over
			}
			if t.replies++; t.replies >= 2 || !t.confirm {
				delete(c.tasks, t.key())
				ended = append(ended, endedTask{t, nil})
				continue
			}
			t.due = now.Add(cleanupBackoffMin)
		case permissionDenied(err), refusedOutright(err):
			delete(c.tasks, t.key()) // retrying cannot help
			ended = append(ended, endedTask{t, err})
		case callerr.NotSent(err):
			t.lastErr, unsent = err, true
		default:
			t.lastErr = err
			t.backoff = min(max(2*t.backoff, cleanupBackoffMin), cleanupBackoffMax)
			t.due = now.Add(t.backoff)
		}
	}
	close(c.applied)
	c.applied = make(chan struct{})
	if unsent {
		// Redis cannot be reached: every clean-up waits, not only these.
		c.pause = min(max(2*c.pause, cleanupBackoffMin), cleanupBackoffMax)
		c.pauseUntil = now.Add(c.pause)
	}
	return ended
}

// refusedReplies are the error replies with which Redis refuses a command
// as a whole, before running any of it.
var refusedReplies = []string{"NOAUTH", "WRONGPASS", "NOPERM"}

// refusedOutright reports whether err is, or wraps, one of refusedReplies
// (a NOPERM on a command inside a script is not: the script may have
// written before it).
func refusedOutright(err error) bool {
	for err != nil {
		word, _, _ := strings.Cut(err.Error(), " ")
		for _, r := range refusedReplies {
			if word == r {
				return true
			}
		}
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		case interface{ Unwrap() []error }:
			for _, inner := range u.Unwrap() {
				if refusedOutright(inner) {
					return true
				}
			}
			return false
		default:
			return false
		}
	}
	return false
}
