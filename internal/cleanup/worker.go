package cleanup

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/internal/callbound"
	"github.com/lockgen/lockgen/internal/callerr"
)

// work runs the clean-ups until none is left, or Close. There is at most
// one at a time.
func (q *Queue) work() {
	for {
		batch, ended, wake, exit := q.collect(time.Now())
		for _, e := range ended {
			e.t.Ended(e.err)
		}
		if exit {
			return
		}
		if len(batch) > 0 {
			q.send(batch)
			continue
		}
		t := time.NewTimer(wake)
		select {
		case <-t.C:
		case <-q.kick:
		case <-q.stop:
		}
		t.Stop()
	}
}

// endedTask is a clean-up that ended, with its error (nil: given back).
type endedTask struct {
	t   *task
	err error
}

// collect returns the clean-ups whose release is due now, those that
// ended, and how long to sleep if there is nothing to send; exit is true
// (and the worker no longer counted) once there is nothing left, or after
// Close.
//
// A clean-up whose Key is held here again (HeldLocally) ends without a
// release: the hold's own release gives it back in the end.
func (q *Queue) collect(now time.Time) (batch []*task, ended []endedTask, wake time.Duration, exit bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.stopped {
		q.working = false
		return nil, nil, 0, true
	}
	next := now.Add(time.Hour)
	limit := MaxBatch
	if q.pause > 0 {
		limit = 1 // the last releases could not be sent: one probes for Redis
	}
	for key, t := range q.tasks {
		if t.sending {
			continue
		}
		if !t.settle() {
			next = callbound.Earliest(next, now.Add(poll))
			continue
		}
		if !t.mayHold || q.cfg.HeldLocally(key) {
			delete(q.tasks, key) // nothing of holder can be in Redis, or a hold here owns it
			continue
		}
		if q.claimed[key] > 0 {
			next = callbound.Earliest(next, now.Add(poll)) // a sibling is acquiring (Claim)
			continue
		}
		if t.giveUpAt.IsZero() {
			t.giveUpAt, t.due = now.Add(t.Lease), now
		}
		if !now.Before(t.giveUpAt) {
			delete(q.tasks, key)
			ended = append(ended, endedTask{t, fmt.Errorf("gave up when its lease would have ended: %w", errors.Join(t.lastErr, q.cfg.GaveUp))})
			continue
		}
		if at := callbound.Latest(t.due, q.pauseUntil); now.Before(at) {
			next = callbound.Earliest(next, at)
			continue
		}
		if len(batch) < limit {
			t.sending = true
			batch = append(batch, t)
		}
	}
	if len(q.tasks) == 0 {
		q.working = false
		close(q.idle)
		q.idle = nil
		return nil, ended, 0, true
	}
	return batch, ended, max(next.Sub(now), 0), false
}

// settle drops the calls in doubt that have returned, learning from each
// what the holder may have in Redis, and reports whether none is left.
func (t *task) settle() bool {
	kept := t.waitFor[:0]
	for _, p := range t.waitFor {
		select {
		case <-p.Done:
			if p.Err == nil || !DidNotRun(p.Err) {
				t.mayHold = true // it ran, or may have
			}
			if p.Err != nil && !DidNotRun(p.Err) {
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

// send sends the releases of batch together, bounded by the batch timeout
// and cancelled by Close, and records the replies.
func (q *Queue) send(batch []*task) {
	calls := make([]backend.Call, len(batch))
	for i, t := range batch {
		calls[i] = t.Release
	}
	ctx, cancel := context.WithTimeout(q.ctx, q.cfg.Timeout)
	replies := q.cfg.Backend.EvalBatch(ctx, calls)
	cancel()
	for _, e := range q.apply(batch, replies, time.Now()) {
		e.t.Ended(e.err)
	}
}

// apply records the replies to the releases of batch and returns the
// clean-ups that ended.
func (q *Queue) apply(batch []*task, replies []backend.Reply, now time.Time) (ended []endedTask) {
	q.mu.Lock()
	defer q.mu.Unlock()
	unsent := false
	for i, t := range batch {
		t.sending = false
		if q.tasks[t.Key] != t {
			continue // abandoned by Close
		}
		err := errors.New("lockgen: no reply in the batch")
		if i < len(replies) {
			err = replies[i].Err
		}
		switch {
		case err == nil:
			q.pause = 0
			if len(t.waitFor) > 0 {
				continue // joined by a call still in doubt: it starts over
			}
			if t.replies++; t.replies >= 2 || !t.confirm {
				delete(q.tasks, t.Key)
				ended = append(ended, endedTask{t, nil})
				continue
			}
			t.due = now.Add(backoffMin)
		case q.cfg.Denied(err), RefusedOutright(err):
			delete(q.tasks, t.Key) // retrying cannot help
			ended = append(ended, endedTask{t, err})
		case callerr.NotSent(err):
			t.lastErr, unsent = err, true
		default:
			t.lastErr = err
			t.backoff = min(max(2*t.backoff, backoffMin), backoffMax)
			t.due = now.Add(t.backoff)
		}
	}
	close(q.applied)
	q.applied = make(chan struct{})
	if unsent {
		// Redis cannot be reached: every clean-up waits, not only these.
		q.pause = min(max(2*q.pause, backoffMin), backoffMax)
		q.pauseUntil = now.Add(q.pause)
	}
	return ended
}
