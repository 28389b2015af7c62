package watchdog

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/internal/callerr"
)

func newBeat(lease time.Duration) (*Heartbeat, chan time.Time, chan struct{}) {
	kept, evicted := make(chan time.Time, 100), make(chan struct{}, 100)
	hb := &Heartbeat{
		Call:    backend.Call{Script: beatScript, Keys: []string{"{q}"}, Args: []string{"h1"}},
		Lease:   lease,
		Kept:    func(sent time.Time) { kept <- sent },
		Evicted: func() { evicted <- struct{}{} },
	}
	return hb, kept, evicted
}

// TestCallAt: a heartbeat tells the place's deadline, a lease from its send
// on the server's clock as last learnt (0 before any), and asks for a
// refresh of the TTLs when none was acknowledged yet or the last one was
// sent refreshEvery ago.
func TestCallAt(t *testing.T) {
	const lease = time.Second
	hb, _, _ := newBeat(lease)
	t0 := time.Now()
	if c := hb.callAt(t0); c.Args[1] != "0" || c.Args[2] != "1" || len(c.Args) != 3 || c.Args[0] != "h1" {
		t.Fatalf("before any clock: args %v, want [h1 0 1]", c.Args)
	}
	hb.learnServerClock(1_000_000, t0)
	hb.learnServerClock(5, t0.Add(-time.Second)) // older: ignored
	hb.learnServerClock(0, t0.Add(time.Second))  // did not say: ignored
	if c := hb.callAt(t0.Add(300 * time.Millisecond)); c.Args[1] != "1001300" {
		t.Fatalf("deadline %s, want 1001300 (server ms + 300ms + lease)", c.Args[1])
	}
	hb.refreshed = t0
	if c := hb.callAt(t0.Add(refreshEvery(lease) - time.Millisecond)); c.Args[2] != "0" || hb.refreshing {
		t.Fatalf("refresh %s just before refreshEvery, want 0", c.Args[2])
	}
	if c := hb.callAt(t0.Add(refreshEvery(lease))); c.Args[2] != "1" || !hb.refreshing {
		t.Fatalf("refresh %s at refreshEvery, want 1", c.Args[2])
	}
	if len(hb.Call.Args) != 1 {
		t.Fatalf("callAt changed the heartbeat's own args: %v", hb.Call.Args)
	}
}

// TestHeartbeatReplies: a heartbeat due (2/3 lease after the request that
// last kept the place) goes out; a positive reply runs Kept with its send,
// a reply 0 runs Evicted, and so does an error reply (a refusal the
// waiter's own attempt will meet), while a call that timed out is retried
// without either.
func TestHeartbeatReplies(t *testing.T) {
	const lease = 300 * time.Millisecond
	s := newSender(func(backend.Call) backend.Reply { return backend.Reply{Value: int64(5000)} })
	d := start(t, s)
	hb, kept, evicted := newBeat(lease)
	before := time.Now()
	d.AddHeartbeat(hb, before, 0)
	select {
	case sent := <-kept:
		if sent.Before(before.Add(heartbeatEvery(lease) - lease/6)) {
			t.Fatalf("heartbeat sent %v after the request that kept the place, before it was due", sent.Sub(before))
		}
	case <-time.After(wait):
		t.Fatal("no heartbeat kept the place")
	}

	for _, c := range []struct {
		name  string
		reply backend.Reply
	}{{"zero", backend.Reply{Value: int64(0)}}, {"refused", backend.Reply{Err: errors.New("ERR wrong protocol")}}} {
		s.setReply(func(backend.Call) backend.Reply { return c.reply })
		select {
		case <-evicted:
		case <-time.After(wait):
			t.Fatalf("reply %s: the waiter was not told", c.name)
		}
	}
	d.RemoveHeartbeat(hb)
}

// TestHeartbeatRetried: a heartbeat that times out is retried, and tells
// the waiter nothing.
func TestHeartbeatRetried(t *testing.T) {
	s := newSender(failing)
	d := start(t, s)
	hb, kept, evicted := newBeat(300 * time.Millisecond)
	d.AddHeartbeat(hb, time.Now(), 0)
	for range 3 {
		s.awaitCall(t)
	}
	if len(kept) > 0 || len(evicted) > 0 {
		t.Fatalf("timed-out heartbeats ran Kept %d times, Evicted %d times; want neither", len(kept), len(evicted))
	}
}

// TestHeartbeatRefused: an error reply is a refusal; a call that failed on
// the way, timed out or got no reply is not.
func TestHeartbeatRefused(t *testing.T) {
	if !heartbeatRefused(errors.New("NOPERM no")) {
		t.Error("an error reply not taken as a refusal")
	}
	for _, err := range []error{nil, context.DeadlineExceeded, context.Canceled, callerr.ErrNoReply} {
		if heartbeatRefused(err) {
			t.Errorf("%v taken as a refusal", err)
		}
	}
}
