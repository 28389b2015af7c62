package wakeup

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/lockgen/lockgen/backend"
)

// The order in which waiters of one process take turns, and which waiters
// a wake message reaches, decided in Lines alone: no Redis, no timing.

// subscribeRecorder is a Backend whose Subscribe succeeds at once and keeps
// the deliver func of each call, so that a test can play the server.
type subscribeRecorder struct {
	mu       sync.Mutex
	delivers []func(string)
}

var errNoScripts = errors.New("subscribeRecorder runs no scripts")

func (*subscribeRecorder) Caps() backend.Caps { return backend.Caps{} }

func (r *subscribeRecorder) Eval(context.Context, backend.Call) (any, error) {
	return nil, errNoScripts
}
func (r *subscribeRecorder) EvalBatch(_ context.Context, calls []backend.Call) []backend.Reply {
	out := make([]backend.Reply, len(calls))
	for i := range out {
		out[i].Err = errNoScripts
	}
	return out
}
func (r *subscribeRecorder) EvalWait(context.Context, backend.Call, int, time.Duration) (any, int, error) {
	return nil, 0, errNoScripts
}
func (r *subscribeRecorder) PublishCommand() string { return "PUBLISH" }
func (r *subscribeRecorder) Close() error           { return nil }

func (r *subscribeRecorder) Subscribe(_ context.Context, _ string, deliver func(string)) (func(), error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.delivers = append(r.delivers, deliver)
	return func() {}, nil
}

// subscribed returns the deliver funcs of the Subscribe calls so far.
func (r *subscribeRecorder) subscribed() []func(string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]func(string){}, r.delivers...)
}

// hasTurn reports whether w may attempt now.
func hasTurn(w *Waiter) bool {
	select {
	case <-w.turn:
		return true
	default:
		return false
	}
}

// takeWake reports whether w has a wake-up pending, and consumes it.
func takeWake(w *Waiter) bool {
	select {
	case <-w.wake:
		return true
	default:
		return false
	}
}

// wantTurns checks which waiters have their turn.
func wantTurns(t *testing.T, step string, want map[*Waiter]bool, names map[*Waiter]string) {
	t.Helper()
	for w, turn := range want {
		if got := hasTurn(w); got != turn {
			t.Errorf("%s: %s has its turn: %v, want %v", step, names[w], got, turn)
		}
	}
}

// Mutex waiters of one process queue in arrival order: the first, which
// found the lock busy, attempts; those that came later (JoinExisting, no
// attempt yet) get their turn one at a time, as those ahead leave.
func TestLineGivesTurnsInArrivalOrder(t *testing.T) {
	m := New(&subscribeRecorder{}, nil)
	const ch = "mutex:{k}:wake"
	if w := m.JoinExisting(ch, "early", true); w != nil {
		t.Fatal("JoinExisting joined a channel nobody waits on")
	}
	w1 := m.Join(ch, "w1", true, true) // told busy, registered in Redis
	w2 := m.JoinExisting(ch, "w2", true)
	w3 := m.JoinExisting(ch, "w3", true)
	w4 := m.JoinExisting(ch, "w4", true)
	if w2 == nil || w3 == nil || w4 == nil {
		t.Fatal("JoinExisting did not join a channel with a waiter")
	}
	names := map[*Waiter]string{w1: "w1", w2: "w2", w3: "w3", w4: "w4"}
	wantTurns(t, "joined", map[*Waiter]bool{w1: true, w2: false, w3: false, w4: false}, names)

	m.Leave(w1, false) // w1 got the lock
	wantTurns(t, "w1 left", map[*Waiter]bool{w2: true, w3: false, w4: false}, names)

	m.Leave(w3, false) // w3 gave up while w2 was first: nobody moves up
	wantTurns(t, "w3 gave up", map[*Waiter]bool{w2: true, w4: false}, names)

	m.Leave(w2, false)
	wantTurns(t, "w2 left", map[*Waiter]bool{w4: true}, names)

	// A waiter that asks again after its release comes last.
	again := m.JoinExisting(ch, "w1-again", true)
	names[again] = "w1-again"
	wantTurns(t, "w1 asked again", map[*Waiter]bool{w4: true, again: false}, names)
	m.Leave(w4, false)
	wantTurns(t, "w4 left", map[*Waiter]bool{again: true}, names)
}

// A mutex waiter that joins as active (it was told busy before it joined,
// so Redis has registered it) has its turn at once, whoever is in line;
// waiters of other kinds are not in line and always have their turn, and
// their leaving moves nobody up.
func TestActiveAndUnlinedWaitersHaveTheirTurn(t *testing.T) {
	m := New(&subscribeRecorder{}, nil)
	const ch = "mutex:{k}:wake"
	first := m.Join(ch, "first", true, true)
	queued := m.JoinExisting(ch, "queued", true)
	active := m.Join(ch, "active", true, true)
	fair := m.JoinExisting(ch, "fair", false)
	fair2 := m.Join(ch, "fair2", false, false)
	names := map[*Waiter]string{first: "first", queued: "queued", active: "active", fair: "fair", fair2: "fair2"}
	wantTurns(t, "joined", map[*Waiter]bool{first: true, queued: false, active: true, fair: true, fair2: true}, names)

	m.Leave(fair, false)
	wantTurns(t, "a waiter not in line left", map[*Waiter]bool{queued: false}, names)
	m.Leave(first, false)
	wantTurns(t, "the first in line left", map[*Waiter]bool{queued: true}, names)
}

// "grant:<fence>:<holder>" hands the lock to that holder's waiter only: it
// alone is woken, with the fence, once.
func TestGrantMessageMarksOnlyItsHolder(t *testing.T) {
	m := New(&subscribeRecorder{}, nil)
	const ch = "mutex:{k}:wake"
	w1 := m.Join(ch, "h1", true, true)
	w2 := m.JoinExisting(ch, "h2", true)
	other := m.JoinExisting(ch, "h3", false)
	m.deliver(w1.ch, &subscription{}, "grant:1234:h2")

	if g, ok := m.TakeGrant(w2); !ok || g.Fence != 1234 || g.Lapsed {
		t.Errorf("h2's grant: %+v ok %v, want fence 1234, not lapsed, true", g, ok)
	}
	if _, ok := m.TakeGrant(w2); ok {
		t.Error("a grant was reported twice")
	}
	if !takeWake(w2) {
		t.Error("h2 was not woken by its grant")
	}
	for _, w := range []*Waiter{w1, other} {
		if _, ok := m.TakeGrant(w); ok {
			t.Errorf("%s was handed h2's grant", w.holder)
		}
		if takeWake(w) {
			t.Errorf("%s was woken by h2's grant", w.holder)
		}
	}
	// A malformed grant concerns nobody that can be told: everyone tries.
	m.deliver(w1.ch, &subscription{}, "grant:x:h2")
	for _, w := range []*Waiter{w1, w2, other} {
		if !takeWake(w) {
			t.Errorf("%s not woken by a malformed grant", w.holder)
		}
		if _, ok := m.TakeGrant(w); ok {
			t.Errorf("%s handed the lock by a malformed grant", w.holder)
		}
	}
}

// A waiter of the releaser's Locker hears of its grant twice: from the
// release's reply (ReleaseEnds), then from the message. The second is no
// wake-up: one the waiter did not use would go on to the next waiter when
// it leaves, for an attempt that could only be busy.
func TestGrantHeardTwiceWakesOnce(t *testing.T) {
	m := New(&subscribeRecorder{}, nil)
	const ch = "fair:{k}:wake"
	head := m.Join(ch, "h1", false, true)
	next := m.Join(ch, "h2", false, true)
	handedOver := func(ch, grant string) {
		wc, _ := m.ReleaseStarts(ch, false)
		m.ReleaseEnds(wc, grant, time.Now())
	}
	handedOver(ch, "grant:1234:h1")
	if !takeWake(head) {
		t.Fatal("h1 was not woken by the grant in the release's reply")
	}
	m.deliver(head.ch, &subscription{}, "grant:1234:h1") // the message, while h1 is on its way out
	if g, ok := m.TakeGrant(head); !ok || g.Fence != 1234 {
		t.Errorf("h1's grant: %+v ok %v, want fence 1234, true", g, ok)
	}
	m.Leave(head, false)
	if takeWake(next) {
		t.Error("h2 was woken when h1 left: the message repeating h1's grant woke h1 a second time")
	}
	// A grant of another fence to the same holder is news.
	handedOver(ch, "grant:1300:h2")
	m.deliver(next.ch, &subscription{}, "grant:1300:h2")
	if !takeWake(next) {
		t.Error("h2 was not woken by its grant")
	}
	if g, ok := m.TakeGrant(next); !ok || g.Fence != 1300 {
		t.Errorf("h2's grant: %+v ok %v, want fence 1300, true", g, ok)
	}
	// A release on a channel nobody here waits on does nothing: it
	// neither wakes anyone nor leaves a channel behind.
	handedOver("mutex:{other}:wake", "grant:1:h2")
	if takeWake(next) {
		t.Error("a grant on another channel woke h2")
	}
	if _, ok := m.channels["mutex:{other}:wake"]; ok {
		t.Error("a release on a channel without waiters made an entry for it")
	}
}

// A grant message that comes while a release of the same Locker on the
// lock is in flight (Redis may write the message before the reply) does
// not wake its waiter: the reply, which dates the grant, does. A release
// that ends without a reply wakes it all the same, for a claim.
func TestGrantMessageWaitsForTheReleaseInFlight(t *testing.T) {
	m := New(&subscribeRecorder{}, nil)
	const ch = "mutex:{k}:wake"
	w := m.Join(ch, "h1", true, true)
	wc, _ := m.ReleaseStarts(ch, false)
	m.deliver(w.ch, &subscription{}, "grant:1234:h1")
	if takeWake(w) {
		t.Fatal("h1 was woken by the message while the release that made the offer was in flight")
	}
	sent := time.Now().Add(-time.Millisecond)
	m.ReleaseEnds(wc, "grant:1234:h1", sent)
	if !takeWake(w) {
		t.Fatal("h1 was not woken by the release's reply")
	}
	if g, ok := m.TakeGrant(w); !ok || g.Fence != 1234 || !g.ReleaseSent.Equal(sent) {
		t.Errorf("h1's grant: %+v ok %v, want fence 1234 dated %v", g, ok, sent)
	}

	wc, _ = m.ReleaseStarts(ch, false)
	m.deliver(w.ch, &subscription{}, "grant:1300:h1")
	m.ReleaseEnds(wc, "", time.Time{}) // no reply
	if !takeWake(w) {
		t.Fatal("h1 was not woken when the release ended without a reply")
	}
	if g, ok := m.TakeGrant(w); !ok || g.Fence != 1300 || !g.ReleaseSent.IsZero() {
		t.Errorf("h1's grant: %+v ok %v, want fence 1300, undated (a message only)", g, ok)
	}
}

// A request that keeps a waiter's place after its previous one may have
// lapsed marks the waiter's grants as possibly stale, for good; requests
// within the keep time do not.
func TestPlaceKeptAfterALapseMarksGrantsStale(t *testing.T) {
	m := New(&subscribeRecorder{}, nil)
	w := m.Join("mutex:{k}:wake", "h1", true, true)
	t0 := time.Now()
	const keep = 500 * time.Millisecond
	for _, sent := range []time.Time{t0, t0.Add(keep / 2), t0.Add(keep - time.Millisecond)} {
		m.PlaceKept(w, sent, keep)
	}
	m.deliver(w.ch, &subscription{}, "grant:7:h1")
	if g, ok := m.TakeGrant(w); !ok || g.Lapsed {
		t.Fatalf("grant after places kept in time: %+v %v, want not lapsed", g, ok)
	}
	m.PlaceKept(w, t0.Add(2*keep), keep) // the previous place lapsed at t0+1.5*keep
	m.PlaceKept(w, t0.Add(2*keep+time.Millisecond), keep)
	m.deliver(w.ch, &subscription{}, "grant:8:h1")
	if g, ok := m.TakeGrant(w); !ok || !g.Lapsed || !g.PlaceKept.Equal(t0.Add(2*keep+time.Millisecond)) {
		t.Fatalf("grant after a lapse: %+v %v, want lapsed, place kept at the latest request", g, ok)
	}
}

// Grant.Since is the earliest send of a request that named the waiter's
// holder id, whatever order they are recorded in, and only for that id: a
// waiter renamed (a new holder id after a transient error) starts afresh,
// and a request naming its old id does not count.
func TestNamedKeepsTheEarliestRequestOfTheHolderID(t *testing.T) {
	m := New(&subscribeRecorder{}, nil)
	w := m.Join("mutex:{k}:wake", "h1", true, true)
	t0 := time.Now()
	m.Named(w, "h1", t0.Add(20*time.Millisecond)) // its own attempt, recorded after its reply
	m.Named(w, "h1", t0)                          // the call ahead that named it went out first
	m.Named(w, "h1", t0.Add(40*time.Millisecond))
	m.deliver(w.ch, &subscription{}, "grant:7:h1")
	if g, ok := m.TakeGrant(w); !ok || !g.Since.Equal(t0) {
		t.Fatalf("grant: %+v %v, want Since the earliest request, %v", g, ok, t0)
	}

	m.Rename(w, "h2")
	m.Named(w, "h1", t0) // a request for the old id
	m.deliver(w.ch, &subscription{}, "grant:8:h2")
	if g, ok := m.TakeGrant(w); !ok || !g.Since.IsZero() {
		t.Fatalf("grant after the rename: %+v %v, want no Since (no request named h2)", g, ok)
	}
	m.Named(w, "h2", t0.Add(time.Second))
	m.deliver(w.ch, &subscription{}, "grant:9:h2")
	if g, ok := m.TakeGrant(w); !ok || !g.Since.Equal(t0.Add(time.Second)) {
		t.Fatalf("grant after h2 was named: %+v %v, want Since %v", g, ok, t0.Add(time.Second))
	}
}

// A subscription the server ends (PayloadUnsubscribed) is no longer taken
// as live, every waiter of the channel is woken, and the next subscribe
// asks the backend again.
func TestUnsubscribedEndsTheSubscriptionAndWakesAll(t *testing.T) {
	rec := &subscribeRecorder{}
	m := New(rec, nil)
	const ch = "mutex:{k}:wake"
	w1 := m.Join(ch, "h1", true, true)
	w2 := m.JoinExisting(ch, "h2", true)
	fair := m.JoinExisting(ch, "h3", false)
	ctx := context.Background()
	if !m.Subscribe(ctx, w1) || !m.Subscribed(w2) {
		t.Fatal("not subscribed after a successful Subscribe")
	}
	subs := rec.subscribed()
	if len(subs) != 1 {
		t.Fatalf("%d Subscribe calls, want 1", len(subs))
	}

	subs[0](backend.PayloadUnsubscribed)
	if m.Subscribed(w1) {
		t.Error("subscription still taken as live after PayloadUnsubscribed")
	}
	for _, w := range []*Waiter{w1, w2, fair} {
		if !takeWake(w) {
			t.Errorf("%s not woken by PayloadUnsubscribed", w.holder)
		}
	}
	if !m.Subscribe(ctx, w2) || !m.Subscribed(w1) {
		t.Fatal("not subscribed again")
	}
	if n := len(rec.subscribed()); n != 2 {
		t.Errorf("%d Subscribe calls after the subscription ended, want 2", n)
	}
}

// A mutex release names the first waiter of its process's line for the
// lock, nearHandOvers times in a row at most; a hand-over to another
// process starts a new run.
func TestNearHandOversAreBounded(t *testing.T) {
	m := New(&subscribeRecorder{}, nil)
	const ch = "mutex:{k}:wake"
	w := m.Join(ch, "h1", true, true)
	m.Join(ch, "h2", true, true)
	for i := range nearHandOvers {
		wc, near := m.ReleaseStarts(ch, true)
		if near != "h1" {
			t.Fatalf("release %d named %q, want the first in line, h1", i+1, near)
		}
		if !m.ReleaseEnds(wc, fmt.Sprintf("grant:%d:h1", 100+i), time.Now()) {
			t.Fatalf("release %d handed the lock to h1, a waiter here, and ReleaseEnds said it did not", i+1)
		}
		m.TakeGrant(w)
	}
	wc, near := m.ReleaseStarts(ch, true)
	if near != "" {
		t.Fatalf("release %d named %q after %d hand-overs in a row in the process", nearHandOvers+1, near, nearHandOvers)
	}
	if m.ReleaseEnds(wc, "grant:200:other", time.Now()) { // to another process
		t.Error("ReleaseEnds said a grant to another process's waiter went to a waiter here")
	}
	if wc, near = m.ReleaseStarts(ch, true); near != "h1" {
		t.Errorf("after a hand-over to another process the release named %q, want h1", near)
	}
	if m.ReleaseEnds(wc, "", time.Time{}) {
		t.Error("ReleaseEnds said a release without a grant handed the lock over here")
	}
	if _, near = m.ReleaseStarts(ch, false); near != "" {
		t.Errorf("a release of another kind named %q", near)
	}
}
