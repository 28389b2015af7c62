package runtime

import (
	"context"
	"fmt"
	"time"

	"github.com/lockgen/lockgen/backend"
)

// RenewNow renews every lock l holds at once, instead of at its next due
// time, and returns once the replies are applied: a lock that Redis no
// longer holds for its holder has had its holders' contexts cancelled with
// ErrLockLost by then. Locks already being renewed are left to that call.
//
// The watchdog does this by itself about every lease/3; RenewNow is for
// tests (package locktest takes a lock away and calls it, so the holder
// hears of the loss at once) and for code that has reason to believe a lock
// may be gone. A lock whose acquire was in flight during RenewNow is
// renewed as soon as its acquire returns. It returns ErrClosed after
// Close, else ctx's error if ctx ended first (a renewal that failed is
// retried by the watchdog as usual).
func (l *Locker) RenewNow(ctx context.Context) error {
	d := l.dog
	d.mu.Lock()
	if d.stopped {
		d.mu.Unlock()
		return ErrClosed
	}
	d.checkedAt = time.Now()
	b := &batch{}
	for _, r := range d.renewals {
		if !r.sending {
			r.sending = true
			b.rs = append(b.rs, r)
			b.calls = append(b.calls, r.renewCall())
		}
	}
	// Counted in flight like the watchdog's own batches, because apply
	// counts it out.
	d.inflight++
	d.mu.Unlock()

	sent := time.Now()
	var replies []backend.Reply
	if len(b.calls) > 0 {
		replies = l.backend.EvalBatch(ctx, b.calls)
	}
	if len(replies) != len(b.calls) {
		err := fmt.Errorf("lockgen: backend returned %d replies to a batch of %d calls", len(replies), len(b.calls))
		replies = make([]backend.Reply, len(b.calls))
		for i := range replies {
			replies[i].Err = err // a failure, not a refusal: retried
		}
	}
	d.apply(b, sent, replies)
	// The run loop may have waited for room in flight: let it look again.
	d.mu.Lock()
	d.wakeBefore(time.Now())
	d.mu.Unlock()
	return ctx.Err()
}
