package watchdog

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockgen/lockgen/backend"
)

// claimLock is lockOf with a claim to make, counting ClaimFailed's runs.
func claimLock(key string, lease time.Duration, failed *atomic.Int32) Lock {
	lk := lockOf(key, lease, time.Now())
	lk.Claim = backend.Call{Script: claimScript, Keys: lk.Renew.Keys}
	lk.ClaimFailed = func() { failed.Add(1) }
	return lk
}

// TestClaimSentFirst: a lock registered with a claim has the claim sent at
// once in place of its renewal; once the claim succeeds, AwaitClaim returns
// and the renewals are the renew call; ClaimFailed does not run.
func TestClaimSentFirst(t *testing.T) {
	s := newSender(ok)
	d := start(t, s)
	o := newOwner()
	var failed atomic.Int32
	if _, err := d.Register(o, claimLock("a", time.Hour, &failed), "holder"); err != nil {
		t.Fatal(err)
	}
	if c := s.awaitCall(t); c.Script != claimScript {
		t.Fatalf("first call %s, want the claim, at once", c.Script.Name)
	}
	o.awaitRenewed(t)
	d.AwaitClaim(o, time.Now().Add(time.Hour)) // settled: returns at once
	d.RenewNow(context.Background())
	if c := s.awaitCall(t); c.Script != renewScript {
		t.Fatalf("call after the claim %s, want the renewal", c.Script.Name)
	}
	if failed.Load() != 0 {
		t.Fatal("ClaimFailed ran for a claim that succeeded")
	}
}

// TestClaimFailsWithTheLock: a lock lost before its claim succeeded runs
// ClaimFailed once, and AwaitClaim does not wait for it.
func TestClaimFailsWithTheLock(t *testing.T) {
	s := newSender(refused)
	d := start(t, s)
	o := newOwner()
	var failed atomic.Int32
	d.Register(o, claimLock("a", time.Hour, &failed), "holder")
	if rep := o.awaitLost(t); reasonOf(rep.cause) != Refused {
		t.Fatalf("lost with %v, want Refused", rep.cause)
	}
	d.AwaitClaim(o, time.Now().Add(time.Hour))
	if n := failed.Load(); n != 1 {
		t.Fatalf("ClaimFailed ran %d times, want once", n)
	}
}

// TestClaimAbandoned: AwaitClaim waits for a claim whose reply does not
// come for half the time to giveUp, then abandons it: ClaimFailed runs
// once, and a reply arriving later does not run it again.
func TestClaimAbandoned(t *testing.T) {
	release := make(chan struct{})
	s := newSender(func(backend.Call) backend.Reply { <-release; return backend.Reply{Value: int64(1)} })
	d := start(t, s)
	o := newOwner()
	var failed atomic.Int32
	d.Register(o, claimLock("a", time.Hour, &failed), "holder")
	s.awaitCall(t) // the claim, stuck
	start := time.Now()
	const bound = 400 * time.Millisecond
	d.AwaitClaim(o, start.Add(bound))
	if took := time.Since(start); took < bound/2-10*time.Millisecond {
		t.Fatalf("AwaitClaim returned after %v, before half the bound %v", took, bound/2)
	}
	if n := failed.Load(); n != 1 {
		t.Fatalf("ClaimFailed ran %d times after the claim was abandoned, want once", n)
	}
	close(release) // the claim's reply, late: it renews, and fails nothing more
	o.awaitRenewed(t)
	if n := failed.Load(); n != 1 {
		t.Fatalf("ClaimFailed ran %d times after the late reply, want once", n)
	}
}
