package watchdog

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/internal/protocol"
)

// TestDeadlineMovesOnRenewal: a lock's local deadline is the send of its
// acquire plus the lease minus the drift margin; an acknowledged renewal
// moves it forward, to no later than that renewal's send plus the same.
func TestDeadlineMovesOnRenewal(t *testing.T) {
	const lease = 3 * time.Second
	s := newSender(ok)
	d := start(t, s)
	o := newOwner()
	sent := time.Now()
	if _, err := d.Register(o, lockOf("a", lease, sent), "holder"); err != nil {
		t.Fatal(err)
	}
	r := o.State()
	before := d.deadlineOf(r)
	if want := sent.Add(lease - protocol.DriftMargin(lease)); !before.Equal(want) {
		t.Fatalf("deadline after register %v, want sent + lease - margin = %v", before, want)
	}
	o.awaitRenewed(t)
	after := d.deadlineOf(r)
	s.mu.Lock()
	seen := s.batches[len(s.batches)-1].at // the send that set after came no later
	s.mu.Unlock()
	if limit := seen.Add(lease - protocol.DriftMargin(lease)); !after.After(before) || after.After(limit) {
		t.Fatalf("deadline after a renewal seen at %v: %v, want after %v and no later than %v", seen, after, before, limit)
	}
}

// TestLocalDeadline: failed renewals leave the local deadline where it
// was, and the lock is told lost (Expired) once it passes, not before,
// with Unregister then reporting the loss in doubt.
func TestLocalDeadline(t *testing.T) {
	const lease = 600 * time.Millisecond
	s := newSender(failing)
	d := start(t, s)
	o := newOwner()
	if _, err := d.Register(o, lockOf("a", lease, time.Now()), "holder"); err != nil {
		t.Fatal(err)
	}
	r := o.State()
	deadline := d.deadlineOf(r)
	rep := o.awaitLost(t)
	if reasonOf(rep.cause) != Expired {
		t.Fatalf("lost with %v, want Expired", rep.cause)
	}
	if rep.at.Before(deadline) {
		t.Fatalf("told lost %v before its deadline", deadline.Sub(rep.at))
	}
	if got := d.deadlineOf(r); !got.Equal(deadline) {
		t.Fatalf("failed renewals moved the deadline from %v to %v", deadline, got)
	}
	s.mu.Lock()
	attempts := len(s.batches)
	s.mu.Unlock()
	if attempts < 2 {
		t.Fatalf("%d renewal attempts before the deadline, want the failures retried", attempts)
	}
	if len(rep.holders) != 1 || rep.holders[0] != "holder" {
		t.Fatalf("Lost told holders %v, want [holder]", rep.holders)
	}
	lost, inDoubt := d.Unregister(o, "holder")
	if reasonOf(lost) != Expired || !inDoubt {
		t.Fatalf("Unregister after expiry: %v, in doubt %v; want the Expired cause, in doubt", lost, inDoubt)
	}
}

// TestRenewedEveryThirdLease: renewals go out about a third of a lease
// after the send of the last acknowledged one, not at once.
func TestRenewedEveryThirdLease(t *testing.T) {
	const lease = 3 * time.Second
	s := newSender(ok)
	d := start(t, s)
	o := newOwner()
	sent := time.Now()
	if _, err := d.Register(o, lockOf("a", lease, sent), "holder"); err != nil {
		t.Fatal(err)
	}
	s.awaitCall(t)
	s.mu.Lock()
	first := s.batches[0].at
	s.mu.Unlock()
	// Due at sent + lease/3; grouping may take it up to lease/6 early.
	if early := sent.Add(lease/3 - lease/6); first.Before(early) {
		t.Fatalf("first renewal sent %v after the acquire, want >= %v", first.Sub(sent), early.Sub(sent))
	}
}

// TestRefusedAndDenied: a renewal the script refuses (0), or that
// Config.Denied names, ends the lock at once with Refused or Denied; the
// loss is not in doubt.
func TestRefusedAndDenied(t *testing.T) {
	for _, c := range []struct {
		name  string
		reply backend.Reply
		want  Reason
	}{
		{"refused", backend.Reply{Value: int64(0)}, Refused},
		{"denied", backend.Reply{Err: errDenied}, Denied},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newSender(func(backend.Call) backend.Reply { return c.reply })
			d := start(t, s)
			o := newOwner()
			if _, err := d.Register(o, lockOf("a", time.Hour, time.Now()), "holder"); err != nil {
				t.Fatal(err)
			}
			if err := d.RenewNow(context.Background()); err != nil {
				t.Fatal(err)
			}
			rep := o.awaitLost(t)
			if reasonOf(rep.cause) != c.want {
				t.Fatalf("lost with %v, want reason %d", rep.cause, c.want)
			}
			if c.want == Denied && !errors.Is(rep.cause, errDenied) {
				t.Fatalf("Denied cause %v does not carry the denial", rep.cause)
			}
			if lost, inDoubt := d.Unregister(o, "holder"); reasonOf(lost) != c.want || inDoubt {
				t.Fatalf("Unregister: %v, in doubt %v", lost, inDoubt)
			}
		})
	}
}

// TestHoldersJoin: a second Register under the same Key joins the first
// renewal (its Owner returned, no second renewal); Lost names both
// holders; and the last holder to go stops the renewals.
func TestHoldersJoin(t *testing.T) {
	s := newSender(ok)
	d := start(t, s)
	o1, o2 := newOwner(), newOwner()
	lk := lockOf("a", time.Hour, time.Now())
	if got, _ := d.Register(o1, lk, "outer"); got != Owner(o1) {
		t.Fatal("a new renewal is not its own Owner")
	}
	if got, _ := d.Register(o2, lk, "inner"); got != Owner(o1) {
		t.Fatal("a second holder of the Key did not join the first renewal")
	}
	if lost, _ := d.Unregister(o1, "outer"); lost != nil || !d.registered(o1.State()) {
		t.Fatalf("the first holder's Unregister: %v, still renewed %v; want nil, true", lost, d.registered(o1.State()))
	}
	if lost, _ := d.Unregister(o1, "inner"); lost != nil || d.registered(o1.State()) {
		t.Fatalf("the last holder's Unregister: %v, still renewed %v; want nil, false", lost, d.registered(o1.State()))
	}

	// Lost names every holder registered then.
	s.setReply(refused)
	o3 := newOwner()
	lk.Key.Holder = "h2"
	d.Register(o3, lk, "outer")
	d.Register(newOwner(), lk, "inner")
	d.RenewNow(context.Background())
	if rep := o3.awaitLost(t); len(rep.holders) != 2 {
		t.Fatalf("Lost told holders %v, want both", rep.holders)
	}
}

// TestStop: Stop tells every lock's Owner it is lost (Closed), with its
// holders; Unregister then reports nothing lost (the owner still gives
// the lock back); Register and RenewNow return Config.Closed.
func TestStop(t *testing.T) {
	d := New(Config{Send: newSender(ok).send, Closed: errClosed})
	o := newOwner()
	d.Register(o, lockOf("a", time.Hour, time.Now()), "holder")
	d.Stop()
	rep := o.awaitLost(t)
	if reasonOf(rep.cause) != Closed || len(rep.holders) != 1 {
		t.Fatalf("Stop told %v with holders %v, want Closed with the holder", rep.cause, rep.holders)
	}
	if lost, inDoubt := d.Unregister(o, "holder"); lost != nil || inDoubt {
		t.Fatalf("Unregister after Stop: %v, %v; want nil, false", lost, inDoubt)
	}
	if _, err := d.Register(newOwner(), lockOf("b", time.Hour, time.Now()), "holder"); err != errClosed {
		t.Fatalf("Register after Stop: %v, want Config.Closed", err)
	}
	if err := d.RenewNow(context.Background()); err != errClosed {
		t.Fatalf("RenewNow after Stop: %v, want Config.Closed", err)
	}
}

// TestReverify: a lock on a key Reverify names is renewed at once, not at
// its next tick (an hour away here); one on another key is not.
func TestReverify(t *testing.T) {
	s := newSender(ok)
	d := start(t, s)
	d.Register(newOwner(), lockOf("a", 3*time.Hour, time.Now()), "holder")
	d.Register(newOwner(), lockOf("b", 3*time.Hour, time.Now()), "holder")
	d.Reverify(func(key string) bool { return key == "{a}" })
	if c := s.awaitCall(t); c.Keys[0] != "{a}" {
		t.Fatalf("Reverify sent the renewal of %v, want {a}", c.Keys)
	}
}
