package watchdog

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/internal/callbound"
	"github.com/lockgen/lockgen/internal/callerr"
	"github.com/lockgen/lockgen/internal/protocol"
)

// The watchdog's rounds: how it picks the renewals and heartbeats that are
// due into batches, sends each batch, paces the retries of those that
// failed, and applies the replies.

// Batching and retry pacing of the watchdog.
const (
	// MaxBatchCalls bounds one batch: a pipeline of 10,000 calls keeps a
	// connection and the server busy for long enough under load that one
	// timeout would take every lock down at once.
	MaxBatchCalls = 1000
	// MaxBatchesInFlight bounds the batches (and their goroutines and
	// connections) in flight at once.
	MaxBatchesInFlight = 4
	// retryPauseMin is the pause after a first failure; it doubles with each
	// further one, up to lease/10 and a quarter of the time left.
	retryPauseMin = 20 * time.Millisecond
)

// batch is what one sender sends: the calls of rs, then those of hbs.
type batch struct {
	rs    []*Renewal
	hbs   []*Heartbeat
	calls []backend.Call
	// by is when the most urgent member's reply stops being of use: its
	// local deadline, or when its place in the queue runs out.
	by time.Time
}

// dueCall is one renewal or heartbeat picked for a batch.
type dueCall struct {
	r  *Renewal
	hb *Heartbeat
	by time.Time
}

// collect picks what goes out now, for at most free batches, and marks it
// as sending. If nothing is due yet it returns no batch and when the first
// thing falls due (and the zero time when it made batches). Once something
// is due, everything due within its lease/6 goes too, most urgent first.
// d.mu must be held.
func (d *Watchdog) collect(now time.Time, free int) ([]*batch, time.Time) {
	firstDue := now.Add(time.Hour)
	for _, r := range d.renewals {
		if !r.sending {
			firstDue = callbound.Earliest(firstDue, r.due)
		}
	}
	for hb := range d.beats {
		if !hb.sending {
			firstDue = callbound.Earliest(firstDue, hb.due)
		}
	}
	if firstDue.After(now) {
		return nil, firstDue
	}
	var due []dueCall
	for _, r := range d.renewals {
		if !r.sending && !r.due.After(now.Add(r.lease/6)) {
			due = append(due, dueCall{r: r, by: r.deadline})
		}
	}
	for hb := range d.beats {
		if !hb.sending && !hb.due.After(now.Add(hb.Lease/6)) {
			due = append(due, dueCall{hb: hb, by: hb.answerBy(now)})
		}
	}
	slices.SortFunc(due, func(a, b dueCall) int { return a.by.Compare(b.by) })
	due = due[:min(len(due), free*MaxBatchCalls)]
	var batches []*batch
	for chunk := range slices.Chunk(due, MaxBatchCalls) {
		b := &batch{by: chunk[0].by, calls: make([]backend.Call, 0, len(chunk))}
		for _, c := range chunk {
			if c.r != nil {
				c.r.sending = true
				b.rs = append(b.rs, c.r)
				b.calls = append(b.calls, c.r.renewCall())
			}
		}
		for _, c := range chunk {
			if c.hb != nil {
				c.hb.sending = true
				b.hbs = append(b.hbs, c.hb)
				b.calls = append(b.calls, c.hb.Call)
			}
		}
		batches = append(batches, b)
	}
	return batches, time.Time{}
}

// send runs one batch and applies its replies. It may take half the time
// its most urgent member has left: a reply later than that would leave no
// time for a retry.
func (d *Watchdog) send(b *batch, done chan<- struct{}) {
	sent := time.Now()
	d.heartbeatCalls(b, sent)
	ctx, cancel := context.WithDeadline(context.Background(), sent.Add(b.by.Sub(sent)/2))
	replies := d.cfg.Send(ctx, b.calls)
	cancel()
	d.apply(b, sent, allReplies(replies, len(b.calls)))
	done <- struct{}{}
}

// allReplies returns replies if there is one per call (n), else n replies
// that each fail: a failure, not a refusal, so that each call is retried.
func allReplies(replies []backend.Reply, n int) []backend.Reply {
	if len(replies) == n {
		return replies
	}
	err := fmt.Errorf("lockgen: backend returned %d replies to a batch of %d calls", len(replies), n)
	replies = make([]backend.Reply, n)
	for i := range replies {
		replies[i].Err = err
	}
	return replies
}

// retryPause is how long a call that failed failures times in a row waits
// before its next attempt, with left before it is of no use any more.
func retryPause(failures int, lease, left time.Duration) time.Duration {
	pause := retryPauseMin << min(failures-1, 16)
	return max(min(pause, lease/10, left/4), 0)
}

// apply records the replies to a batch sent at sent, then tells owners
// and waiters what they mean.
func (d *Watchdog) apply(b *batch, sent time.Time, replies []backend.Reply) {
	now := time.Now()
	d.mu.Lock()
	renewed, lost := d.applyRenewals(b.rs, sent, now, replies[:len(b.rs)])
	kept, evicted := d.applyHeartbeats(b.hbs, sent, now, replies[len(b.rs):])
	d.inflight--
	d.mu.Unlock()

	for _, r := range renewed {
		r.owner.Renewed()
	}
	for _, r := range lost {
		if r.denied != nil {
			d.lose(r, r.owner.Cause(Denied, r.denied))
		} else {
			d.lose(r, r.owner.Cause(Refused, nil))
		}
	}
	for _, f := range kept {
		f(sent)
	}
	for _, f := range evicted {
		f()
	}
}

// applyRenewals records the replies to renewals sent at sent. d.mu must be
// held.
func (d *Watchdog) applyRenewals(rs []*Renewal, sent, now time.Time, replies []backend.Reply) (renewed, lost []*Renewal) {
	for i, r := range rs {
		rep := replies[i]
		r.sending = false
		if d.renewals[r.key] != r {
			continue // released or lost meanwhile
		}
		switch v, ok := rep.Value.(int64); {
		case d.cfg.Denied(rep.Err):
			// Retrying cannot help: the holder hears it now.
			r.denied = rep.Err
			delete(d.renewals, r.key)
			lost = append(lost, r)
		case rep.Err != nil || !ok:
			// Try again soon; the deadline decides when to give up.
			r.failures++
			r.due = now.Add(retryPause(r.failures, r.lease, r.deadline.Sub(now)))
		case v == 1:
			r.failures = 0
			if r.claim.Script != nil {
				r.claim, r.claimFailed = backend.Call{}, nil
				close(r.claimDone)
			}
			r.due = sent.Add(r.lease / 3)
			if r.recheck {
				r.recheck = false
				r.due = now
			}
			r.deadline = callbound.Latest(r.deadline, sent.Add(r.lease-protocol.DriftMargin(r.lease)))
			renewed = append(renewed, r)
		default:
			delete(d.renewals, r.key)
			lost = append(lost, r)
		}
	}
	return renewed, lost
}

// applyHeartbeats records the replies to heartbeats sent at sent and
// returns the callbacks to run. d.mu must be held.
func (d *Watchdog) applyHeartbeats(hbs []*Heartbeat, sent, now time.Time, replies []backend.Reply) (kept []func(time.Time), evicted []func()) {
	for i, hb := range hbs {
		rep := replies[i]
		hb.sending = false
		if _, ok := d.beats[hb]; !ok {
			continue
		}
		switch v, ok := rep.Value.(int64); {
		case rep.Err != nil || !ok:
			hb.failures++
			hb.due = now.Add(retryPause(hb.failures, hb.Lease, hb.answerBy(now).Sub(now)))
			if heartbeatRefused(rep.Err) {
				// The waiter makes no attempt of its own while its
				// heartbeat runs: it makes one now, which meets the
				// refusal (a lock of another protocol, NOPERM) itself.
				evicted = append(evicted, hb.Evicted)
			}
		case v >= 1:
			// v ms: when the lock's lease ends at the latest. The next
			// heartbeat looks then whether it ended without a release (its
			// holder died), and hands it on; a renewed lease ends later.
			hb.failures = 0
			if hb.refreshing {
				hb.refreshed = callbound.Latest(hb.refreshed, sent)
			}
			hb.due = sent.Add(min(heartbeatEvery(hb.Lease), time.Duration(v)*time.Millisecond))
			hb.placeUntil = callbound.Latest(hb.placeUntil, sent.Add(hb.Lease))
			kept = append(kept, hb.Kept)
		default:
			hb.failures = 0
			hb.due = sent.Add(heartbeatEvery(hb.Lease))
			// The place is gone; the one the next attempt makes may be in
			// new sets, whose TTLs no refresh has set yet.
			hb.refreshed = time.Time{}
			evicted = append(evicted, hb.Evicted)
		}
	}
	return kept, evicted
}

// heartbeatRefused reports whether err, a heartbeat's error, is Redis
// refusing the call (an error reply), which the next attempt would meet
// too, rather than a call that failed on the way or ran out of time.
func heartbeatRefused(err error) bool {
	return err != nil && !callerr.IsTransient(err) && !errors.Is(err, callerr.ErrNoReply) &&
		!errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled)
}
