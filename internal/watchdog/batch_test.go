package watchdog

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/lockgen/lockgen/backend"
)

// TestRetryPause: the pause after a failure starts at 20ms and doubles with
// each further one, never more than a tenth of the lease nor a quarter of
// the time left, and never negative.
func TestRetryPause(t *testing.T) {
	for _, c := range []struct {
		failures    int
		lease, left time.Duration
		want        time.Duration
	}{
		{1, time.Minute, time.Minute, 20 * time.Millisecond},
		{2, time.Minute, time.Minute, 40 * time.Millisecond},
		{3, time.Minute, time.Minute, 80 * time.Millisecond},
		{8, time.Minute, time.Minute, 2560 * time.Millisecond},
		{10, time.Second, time.Minute, 100 * time.Millisecond},          // lease/10
		{4, time.Minute, 200 * time.Millisecond, 50 * time.Millisecond}, // left/4
		{1, time.Minute, -time.Second, 0},                               // past: at once
		{1000, time.Minute, time.Hour, 6 * time.Second},                 // no overflow
	} {
		if got := retryPause(c.failures, c.lease, c.left); got != c.want {
			t.Errorf("retryPause(%d, %v, %v) = %v, want %v", c.failures, c.lease, c.left, got, c.want)
		}
	}
}

// TestAllReplies: a backend that answers a batch with the wrong number of
// replies fails every call of it (retried), rather than misapplying them.
func TestAllReplies(t *testing.T) {
	got := allReplies([]backend.Reply{{Value: int64(1)}}, 3)
	if len(got) != 3 {
		t.Fatalf("%d replies, want 3", len(got))
	}
	for i, r := range got {
		if r.Err == nil || r.Value != nil {
			t.Errorf("reply %d: %+v, want a failure", i, r)
		}
	}
}

// TestBatchBounds: with 5,000 renewals due at once, every batch holds at
// most 1,000 calls and at most 4 are in flight at once; the fifth thousand
// goes once a batch returns; the most urgent go first; every lock is
// renewed.
func TestBatchBounds(t *testing.T) {
	const n, lease = 5000, time.Hour
	// The bounds the package doc states, not the constants: a change of
	// those must show here.
	const batchCalls, inFlight = 1000, 4
	gate := make(chan struct{})
	var mu sync.Mutex
	inflight, busiest, largest := 0, 0, 0
	var sizes []int
	var firstRound []backend.Call // the batches sent before one returned
	send := func(ctx context.Context, calls []backend.Call) []backend.Reply {
		mu.Lock()
		inflight++
		busiest, largest = max(busiest, inflight), max(largest, len(calls))
		sizes = append(sizes, len(calls))
		if len(sizes) <= inFlight {
			firstRound = append(firstRound, calls...)
		}
		mu.Unlock()
		<-gate
		mu.Lock()
		inflight--
		mu.Unlock()
		replies := make([]backend.Reply, len(calls))
		for i := range replies {
			replies[i].Value = int64(1)
		}
		return replies
	}
	d := New(Config{Send: send, Closed: errClosed})
	defer d.Stop()
	// All due in two seconds, once all are registered (a third of a lease
	// after their send); lock i has its deadline earlier than lock i-1.
	base := time.Now().Add(2*time.Second - lease/3)
	owners := make([]*testOwner, n)
	for i := range owners {
		owners[i] = newOwner()
		lk := lockOf(strconv.Itoa(i), lease, base)
		lk.ValidFor += time.Duration(n-i) * time.Millisecond           // the last one most urgent
		lk.Sent = base.Add(-time.Duration(n-i) * time.Millisecond / 3) // due at base + lease/3 still
		d.Register(owners[i], lk, i)
	}
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(sizes) == inFlight })
	close(gate)
	for _, o := range owners {
		o.awaitRenewed(t)
	}
	mu.Lock()
	defer mu.Unlock()
	if busiest > inFlight || largest > batchCalls {
		t.Fatalf("%d batches in flight at once, largest %d calls; want <= %d, <= %d", busiest, largest, inFlight, batchCalls)
	}
	if sizes[0] != batchCalls || len(sizes) < n/batchCalls {
		t.Fatalf("batch sizes %v, want full batches of %d", sizes, batchCalls)
	}
	for _, c := range firstRound {
		if i, _ := strconv.Atoi(c.Keys[0][1 : len(c.Keys[0])-1]); i < n-inFlight*batchCalls {
			t.Fatalf("lock %d in the first %d batches, which should hold the most urgent", i, inFlight)
		}
	}
}

// TestGroupedWithinSixthLease: once a renewal is due, those due within a
// sixth of a lease go in the same round; one due later does not.
func TestGroupedWithinSixthLease(t *testing.T) {
	const lease = 30 * time.Second // lease/6 = 5s
	s := newSender(ok)
	d := start(t, s)
	now := time.Now()
	// The first due in a second, once all three are registered.
	due := map[string]time.Duration{"now": time.Second, "soon": 4 * time.Second, "later": 10 * time.Second}
	for key, in := range due {
		// Due a third of a lease after its send.
		d.Register(newOwner(), lockOf(key, lease, now.Add(in-lease/3)), key)
	}
	first := map[string]bool{}
	for range 2 {
		c := s.awaitCall(t)
		first[c.Keys[0]] = true
	}
	s.mu.Lock()
	batches := len(s.batches)
	s.mu.Unlock()
	if !first["{now}"] || !first["{soon}"] || batches != 1 {
		t.Fatalf("first round %v in %d batches, want {now} and {soon} in one", first, batches)
	}
	select {
	case c := <-s.calls:
		t.Fatalf("%v renewed with the first round, due 9s later", c.Keys)
	default:
	}
}

// waitFor polls cond until it holds, for at most wait.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(wait); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("condition not met in time")
		}
	}
}
