package watchdog

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/lua"
)

// The scripts of the tests' calls: only their identity matters.
var (
	renewScript = &lua.Script{Name: "renew"}
	claimScript = &lua.Script{Name: "claim"}
	beatScript  = &lua.Script{Name: "heartbeat"}
)

// wait bounds every wait of the tests: generous, for a busy machine.
const wait = 10 * time.Second

// causeErr is the cause a testOwner words: the Reason, and the error given.
type causeErr struct {
	reason Reason
	err    error
}

func (e *causeErr) Error() string { return fmt.Sprintf("reason %d: %v", e.reason, e.err) }
func (e *causeErr) Unwrap() error { return e.err }

// reasonOf returns the Reason a testOwner's cause carries (255 if none).
func reasonOf(err error) Reason {
	var c *causeErr
	if errors.As(err, &c) {
		return c.reason
	}
	return 255
}

// lostReport is one call of a testOwner's Lost.
type lostReport struct {
	cause   error
	holders []any
	at      time.Time
}

// testOwner records what the watchdog tells it.
type testOwner struct {
	state   Renewal
	renewed chan time.Time  // each Renewed, when it ran
	lost    chan lostReport // Lost, at most once
}

func newOwner() *testOwner {
	return &testOwner{renewed: make(chan time.Time, 1000), lost: make(chan lostReport, 2)}
}

func (o *testOwner) State() *Renewal { return &o.state }
func (o *testOwner) Renewed()        { o.renewed <- time.Now() }
func (o *testOwner) Cause(reason Reason, err error) error {
	return &causeErr{reason: reason, err: err}
}
func (o *testOwner) Lost(cause error, holders []any) {
	o.lost <- lostReport{cause: cause, holders: holders, at: time.Now()}
}

// awaitLost waits for o's Lost.
func (o *testOwner) awaitLost(t *testing.T) lostReport {
	t.Helper()
	select {
	case rep := <-o.lost:
		return rep
	case <-time.After(wait):
		t.Fatal("the owner was not told its lock was lost")
		return lostReport{}
	}
}

// awaitRenewed waits for o's next Renewed.
func (o *testOwner) awaitRenewed(t *testing.T) {
	t.Helper()
	select {
	case <-o.renewed:
	case <-time.After(wait):
		t.Fatal("the owner was not told of a renewal")
	}
}

// sender is a fake Config.Send: it records each batch (when it was sent
// and its calls) and answers each call with reply.
type sender struct {
	mu      sync.Mutex
	reply   func(c backend.Call) backend.Reply
	batches []sentBatch
	calls   chan backend.Call // every call, as it is sent
}

type sentBatch struct {
	at    time.Time
	calls []backend.Call
}

func newSender(reply func(c backend.Call) backend.Reply) *sender {
	return &sender{reply: reply, calls: make(chan backend.Call, 100000)}
}

func (s *sender) send(ctx context.Context, calls []backend.Call) []backend.Reply {
	s.mu.Lock()
	s.batches = append(s.batches, sentBatch{at: time.Now(), calls: append([]backend.Call(nil), calls...)})
	reply := s.reply
	s.mu.Unlock()
	replies := make([]backend.Reply, len(calls))
	for i, c := range calls {
		s.calls <- c
		replies[i] = reply(c)
	}
	return replies
}

// setReply changes the replies from now on.
func (s *sender) setReply(reply func(c backend.Call) backend.Reply) {
	s.mu.Lock()
	s.reply = reply
	s.mu.Unlock()
}

// awaitCall waits for the next call sent.
func (s *sender) awaitCall(t *testing.T) backend.Call {
	t.Helper()
	select {
	case c := <-s.calls:
		return c
	case <-time.After(wait):
		t.Fatal("no call sent")
		return backend.Call{}
	}
}

func ok(backend.Call) backend.Reply      { return backend.Reply{Value: int64(1)} }
func refused(backend.Call) backend.Reply { return backend.Reply{Value: int64(0)} }
func failing(backend.Call) backend.Reply {
	return backend.Reply{Err: context.DeadlineExceeded}
}

// start returns a Watchdog over s, stopped when the test ends.
func start(t *testing.T, s *sender) *Watchdog {
	d := New(Config{Send: s.send, Denied: func(err error) bool { return errors.Is(err, errDenied) }, Closed: errClosed})
	t.Cleanup(d.Stop)
	return d
}

var (
	errDenied = errors.New("NOPERM test")
	errClosed = errors.New("closed")
)

// lockOf describes a lock named key with lease, taken by a call sent at
// sent.
func lockOf(key string, lease time.Duration, sent time.Time) Lock {
	return Lock{
		Key:      Key{Lock: key, Holder: "h1"},
		FirstKey: "{" + key + "}",
		Lease:    lease,
		Sent:     sent,
		ValidFor: lease,
		Renew:    backend.Call{Script: renewScript, Keys: []string{"{" + key + "}"}},
	}
}

// deadlineOf reads r's local deadline.
func (d *Watchdog) deadlineOf(r *Renewal) time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	return r.deadline
}

// registered reports whether r is still renewed.
func (d *Watchdog) registered(r *Renewal) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.renewals[r.key] == r
}
