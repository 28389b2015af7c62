package cleanup

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/internal/callerr"
	"github.com/lockgen/lockgen/internal/callqueue"
)

var errGaveUp = errors.New("test: gave up")

// fakeBackend answers EvalBatch with reply(call index in its life); the
// other Backend methods are not used by a Queue.
type fakeBackend struct {
	backend.Backend
	mu      sync.Mutex
	batches [][]backend.Call
	reply   func(n int, ctx context.Context) error // n: 0-based release count
	sent    chan int                               // the size of each batch, if not nil
}

func (b *fakeBackend) EvalBatch(ctx context.Context, calls []backend.Call) []backend.Reply {
	b.mu.Lock()
	n := 0
	for _, bt := range b.batches {
		n += len(bt)
	}
	b.batches = append(b.batches, calls)
	b.mu.Unlock()
	if b.sent != nil {
		b.sent <- len(calls)
	}
	replies := make([]backend.Reply, len(calls))
	for i := range calls {
		if b.reply != nil {
			replies[i].Err = b.reply(n+i, ctx)
		}
	}
	return replies
}

func (b *fakeBackend) releases() (batches, calls int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, bt := range b.batches {
		calls += len(bt)
	}
	return len(b.batches), calls
}

func newQueue(t *testing.T, b *fakeBackend, held func(Key) bool) *Queue {
	t.Helper()
	if held == nil {
		held = func(Key) bool { return false }
	}
	q := &Queue{}
	q.Init(Config{Backend: b, Timeout: 5 * time.Second, HeldLocally: held,
		Denied: func(err error) bool { return errors.Is(err, errDenied) }, GaveUp: errGaveUp})
	t.Cleanup(q.Close)
	return q
}

var errDenied = errors.New("test: denied")

// request returns a Request on key holder whose end is sent on the
// returned channel.
func request(holder string, lease time.Duration) (Request, chan error) {
	ended := make(chan error, 1)
	return Request{
		Key:     Key{Lock: "lock", Holder: holder},
		Release: backend.Call{Args: []string{holder}},
		Lease:   lease,
		Ended:   func(err error) { ended <- err },
	}, ended
}

func waitEnd(t *testing.T, ended chan error) error {
	t.Helper()
	select {
	case err := <-ended:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("the clean-up did not end")
		return nil
	}
}

// dialErr is an error callerr.NotSent recognises: the call never left.
var dialErr = &net.OpError{Op: "dial", Err: errors.New("connection refused")}

func TestNothingIsSentBeforeTheCallInDoubtReturns(t *testing.T) {
	b := &fakeBackend{}
	q := newQueue(t, b, nil)
	r, ended := request("h1", time.Minute)
	p := &callqueue.Pending{Done: make(chan struct{})}
	q.Add(r, p, false)
	time.Sleep(5 * poll) // the worker polls the call in doubt meanwhile
	if _, calls := b.releases(); calls != 0 {
		t.Fatalf("%d releases sent while the call in doubt had not returned", calls)
	}
	p.Err = errors.Join(callerr.ErrNoReply, errors.New("i/o timeout"))
	close(p.Done)
	if err := waitEnd(t, ended); err != nil {
		t.Fatalf("ended with %v, want nil", err)
	}
	// Without a reply, the call may have run after the first release: a
	// second one confirms.
	if _, calls := b.releases(); calls != 2 {
		t.Fatalf("%d releases, want 2 (a release and its confirmation)", calls)
	}
}

func TestACallThatDidNotRunLeavesNothingToSend(t *testing.T) {
	b := &fakeBackend{}
	q := newQueue(t, b, nil)
	r, ended := request("h1", time.Minute)
	q.Add(r, callqueue.Finished(fmt.Errorf("acquire: %w", dialErr)), false)
	q.Close()
	if _, calls := b.releases(); calls != 0 {
		t.Fatalf("%d releases for a call never sent", calls)
	}
	select {
	case err := <-ended:
		t.Fatalf("ended (%v), want no end: there was nothing to clean", err)
	default:
	}
}

func TestAHoldHereEndsTheCleanUpWithoutARelease(t *testing.T) {
	b := &fakeBackend{}
	q := newQueue(t, b, func(k Key) bool { return k.Holder == "h1" })
	r, _ := request("h1", time.Minute)
	q.Add(r, callqueue.Returned, true)
	q.Close()
	if _, calls := b.releases(); calls != 0 {
		t.Fatalf("%d releases for a lock held here", calls)
	}
}

func TestReleasesGoOutInBoundedBatches(t *testing.T) {
	const n = 3*MaxBatch + 7
	b := &fakeBackend{}
	q := newQueue(t, b, nil)
	ends := make([]chan error, n)
	p := &callqueue.Pending{Done: make(chan struct{})}
	for i := range n {
		var r Request
		r, ends[i] = request(fmt.Sprint("h", i), time.Minute)
		q.Add(r, p, true)
	}
	close(p.Done) // all become due at once
	for i := range n {
		if err := waitEnd(t, ends[i]); err != nil {
			t.Fatalf("clean-up %d ended with %v", i, err)
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, bt := range b.batches {
		if len(bt) > MaxBatch {
			t.Fatalf("a batch of %d releases, want at most %d", len(bt), MaxBatch)
		}
	}
	if len(b.batches) >= n {
		t.Fatalf("%d batches for %d releases: they were not batched", len(b.batches), n)
	}
}
