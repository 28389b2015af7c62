package failover_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/lockgen/lockgen/runtime"
)

// clChurn is clients that compete for the same fresh mutexes, each taking
// one with a single try, holding it for clChurnHold and releasing it, over
// and over, as busy clients do. It records every acquire, to tell failures
// and double grants (two clients holding one lock at once).
type clChurn struct {
	mu   sync.Mutex
	ops  []clOp
	stop chan struct{}
	done sync.WaitGroup
}

// clChurnHold is how long a churn client holds a lock it got.
const clChurnHold = 5 * time.Millisecond

// clOp is one churn acquire: when it began and returned, and, if it got
// the lock, until when the client held it.
type clOp struct {
	client     int
	key        string
	start, end time.Time
	heldUntil  time.Time // zero if not granted
	err        error     // nil or ErrNotAcquired are fine
}

// startClChurn starts one churn client per Locker on keys.
func startClChurn(lockers []*runtime.Locker, keys []string) *clChurn {
	c := &clChurn{stop: make(chan struct{})}
	for n, l := range lockers {
		c.done.Add(1)
		go func() {
			defer c.done.Done()
			for i := n; ; i++ {
				select {
				case <-c.stop:
					return
				case <-time.After(10 * time.Millisecond):
				}
				c.record(c.once(l, n, keys[i%len(keys)]))
			}
		}()
	}
	return c
}

// once is one acquire, hold and release.
func (c *clChurn) once(l *runtime.Locker, client int, key string) clOp {
	ctx, cancel := context.WithTimeout(context.Background(), clWaitFor)
	defer cancel()
	op := clOp{client: client, key: key, start: time.Now()}
	h, err := l.Acquire(ctx, runtime.Lock{Kind: runtime.Mutex, Key: key, Wait: runtime.NoWait})
	op.end, op.err = time.Now(), err
	if err != nil {
		return op
	}
	select {
	case <-time.After(clChurnHold):
	case <-h.Context().Done():
	}
	op.heldUntil = time.Now()
	if err := h.Release(); err != nil && !errors.Is(err, runtime.ErrLockLost) {
		op.err = err
	}
	return op
}

func (c *clChurn) record(op clOp) {
	c.mu.Lock()
	c.ops = append(c.ops, op)
	c.mu.Unlock()
}

// finish stops the churn and returns what it did.
func (c *clChurn) finish() []clOp {
	close(c.stop)
	c.done.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ops
}

// clChurnStats is what the churn saw.
type clChurnStats struct {
	acquires, grants, doubles int
	longest                   time.Duration // longest acquire call
	firstAfter                time.Duration // from the takeover to the first grant of an acquire begun after it
}

// clChurnReport reports every churn acquire that failed as a test error
// and returns the churn's numbers; after is the takeover.
func clChurnReport(t *testing.T, ops []clOp, after time.Time) clChurnStats {
	t.Helper()
	st := clChurnStats{acquires: len(ops), firstAfter: -1}
	failed := 0
	for _, op := range ops {
		if op.err != nil && !errors.Is(op.err, runtime.ErrNotAcquired) {
			if failed++; failed <= 5 {
				t.Errorf("churn acquire at %v failed: %v", op.start.Format("15:04:05.000"), op.err)
			}
			continue
		}
		st.longest = max(st.longest, op.end.Sub(op.start))
		if op.heldUntil.IsZero() {
			continue
		}
		st.grants++
		if st.firstAfter < 0 && !op.start.Before(after) {
			st.firstAfter = op.end.Sub(after)
		}
	}
	st.doubles = clDoubleGrants(ops)
	if failed > 0 {
		t.Errorf("%d of %d churn acquires failed", failed, len(ops))
	}
	if st.firstAfter < 0 {
		t.Errorf("no churn acquire begun after the takeover got its lock (%d acquires)", len(ops))
	}
	return st
}

// clDoubleGrants counts the grants made while another client held the
// same lock: from the return of its acquire until it let go.
func clDoubleGrants(ops []clOp) int {
	doubles := 0
	for i, a := range ops {
		if a.heldUntil.IsZero() {
			continue
		}
		for _, b := range ops[i+1:] {
			if b.heldUntil.IsZero() || b.key != a.key || b.client == a.client {
				continue
			}
			if a.end.Before(b.heldUntil) && b.end.Before(a.heldUntil) {
				doubles++
			}
		}
	}
	return doubles
}

// waitGrants waits until the churn has made n grants of acquires begun
// at or after since, or clWaitFor has passed (clChurnReport then says
// what is missing).
func (c *clChurn) waitGrants(since time.Time, n int) {
	deadline := time.Now().Add(clWaitFor)
	for time.Now().Before(deadline) {
		c.mu.Lock()
		got := 0
		for _, op := range c.ops {
			if !op.heldUntil.IsZero() && !op.start.Before(since) {
				got++
			}
		}
		c.mu.Unlock()
		if got >= n {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}
