package gopherlua_test

import (
	"regexp"
	"strconv"
	"testing"

	"github.com/lockgen/lockgen/lua"
)

// mutexInvariantScenarios state the invariants of the mutex's protocol 2
// (waiters registered under fences, releases that offer, claims), each
// against the interleaving that would break it.
func mutexInvariantScenarios() []*scenario {
	return []*scenario{staleOffer(), deadWaiter(), claimRegistersNext(), holderRegistersNext(), idleWaiterCost(), protocol1Registration(), renewClaims(), nearHandOver(), releaseToAll()}
}

// Invariant: an offer is only an offer. Only the lock's value in Redis
// says who holds it, and a claim (mutex_acquire) is the only way a waiter
// learns it holds: a claim after the offer lapsed and someone else took
// the lock is refused (busy), and the late claimant's value never comes
// back. The interleaving of issue #24, which fooled protocol 1 (whose
// runtime took the grant message for the grant): B registers; A releases,
// offering B the lock (message G1); B does not claim; the offer lapses
// (LG_OFFER_MS after the release); C takes the lock with the next fence;
// then B claims. G1 reaching B late is harmless in protocol 2: no message
// is ever taken as a grant, the runtime always claims, and the claim is
// what is refused here. While the offer stands it holds others off like
// a lease (C's first try is busy for the rest of the offer).
func staleOffer() *scenario {
	acq, rel := lua.MutexAcquire, lua.MutexRelease
	return &scenario{
		name: "mutex-stale-offer", fam: mutexFamily,
		steps: []step{
			{at: 0, script: acq, holder: "A", lease: 1000 * ms, extra: registers, want: granted()},
			{at: 100 * ms, script: acq, holder: "B", lease: 1000 * ms, extra: registers, want: busy(900),
				expect: []keyWant{{suffix: ":waiters", members: []string{"B"}, under: []string{"A"}}}},
			// G1: the offer to B, fence F+1.
			{at: 200 * ms, script: rel, holder: "A", lease: 1000 * ms, ownFence: true, want: handedTo("B"),
				expect: []keyWant{{holder: "B", waiters: "1", ttl: offer, handed: true}, {suffix: ":waiters", absent: true}}},
			{at: 300 * ms, script: acq, holder: "C", lease: 1000 * ms, extra: registers, want: busyBy(400, "B", -1),
				expect: []keyWant{{holder: "B", waiters: "1"}, {suffix: ":waiters", members: []string{"C"}, under: []string{"B"}}}},
			// The offer lapsed at 700 ms (the step runs 300 ms after,
			// beyond the real server's scheduling noise): C takes the
			// lock as free, with the fence F+2, and its registration goes.
			{at: 1000 * ms, script: acq, holder: "C", lease: 1000 * ms, extra: registers, want: granted(),
				expect: []keyWant{{holder: "C", waiters: "0", ttl: 1000 * ms}, {suffix: ":waiters", absent: true}}},
			// B's late claim: busy, naming C; B only registers again,
			// under C's fence, and the key stays C's with C's fence.
			{at: 1100 * ms, script: acq, holder: "B", lease: 1000 * ms, extra: registers, want: busyBy(900, "C", -1),
				expect: []keyWant{{holder: "C", waiters: "1", ttl: 900 * ms}, {suffix: ":waiters", members: []string{"B"}, under: []string{"C"}}}},
			{at: 1100 * ms, script: lua.MutexRenew, holder: "B", lease: 1000 * ms, want: integer(0), unchanged: true},
			// B gives up: its release withdraws the registration and
			// leaves C's lock as it is.
			{at: 1200 * ms, script: rel, holder: "B", lease: 1000 * ms, ownFence: true, want: integer(0),
				expect: []keyWant{{holder: "C", waiters: "1", ttl: 800 * ms}, {suffix: ":waiters", absent: true}}},
			{at: 1300 * ms, script: rel, holder: "C", lease: 1000 * ms, ownFence: true, want: integer(1), expect: retired(mutexFamily)},
		},
		// G1, and no "taken": B never claimed.
		wakes: []string{grantWake("B"), "all"},
	}
}

// Invariant: a dead waiter delays the next one by the offer only, not by a
// lease. B registers and dies; A's release offers B the lock; C,
// registered behind B, is told to come back when the offer ends (its wait
// is what is left of the offer, 400 ms, not B's lease) and then takes the
// lock with a fence above B's offer. (C tries 700 ms after the release,
// not 600: 200 ms of margin for a release step that runs late on the real
// server.)
func deadWaiter() *scenario {
	acq, rel := lua.MutexAcquire, lua.MutexRelease
	return &scenario{
		name: "mutex-dead-waiter", fam: mutexFamily,
		steps: []step{
			{at: 0, script: acq, holder: "A", lease: 1000 * ms, extra: registers, want: granted()},
			{at: 100 * ms, script: acq, holder: "B", lease: 1000 * ms, extra: registers, want: busy(900)},
			{at: 110 * ms, script: acq, holder: "C", lease: 1000 * ms, extra: registers, want: busy(890),
				expect: []keyWant{{suffix: ":waiters", members: []string{"B", "C"}, under: []string{"A", "A"}}}},
			{at: 200 * ms, script: rel, holder: "A", lease: 1000 * ms, ownFence: true, want: handedTo("B"),
				expect: []keyWant{{holder: "B", waiters: "1", ttl: offer, handed: true},
					{suffix: ":waiters", members: []string{"C"}, under: []string{"A"}}}},
			// C, already registered, keeps its place and costs nothing.
			{at: 300 * ms, script: acq, holder: "C", lease: 1000 * ms, extra: registers, want: busyBy(400, "B", -1), unchanged: true},
			{at: 900 * ms, script: acq, holder: "C", lease: 1000 * ms, extra: registers, want: granted(),
				expect: []keyWant{{holder: "C", waiters: "0", ttl: 1000 * ms}, {suffix: ":waiters", absent: true}}},
			{at: 1000 * ms, script: rel, holder: "C", lease: 1000 * ms, ownFence: true, want: integer(1), expect: retired(mutexFamily)},
		},
		wakes: []string{grantWake("B")},
	}
}

// Invariant: the next waiter of the claimant's own process (ARGV[5]) is
// registered by the claim itself, under the claimant's fence, and so is
// offered the lock by the claimant's release with no call of its own. The
// same holds for a caller that takes a free lock. A busy reply registers
// only the caller, and a caller naming itself is refused.
func claimRegistersNext() *scenario {
	acq, rel := lua.MutexAcquire, lua.MutexRelease
	return &scenario{
		name: "mutex-claim-registers-next", fam: mutexFamily,
		steps: []step{
			{at: 0, script: acq, holder: "A", lease: 1000 * ms, extra: registers, want: granted()},
			{at: 100 * ms, script: acq, holder: "B", lease: 1000 * ms, extra: registers, want: busy(900)},
			{at: 200 * ms, script: rel, holder: "A", lease: 1000 * ms, ownFence: true, want: handedTo("B"),
				expect: []keyWant{{holder: "B", waiters: "1", ttl: offer, handed: true}, {suffix: ":waiters", absent: true}}},
			{at: 300 * ms, script: acq, holder: "B", lease: 1000 * ms, extra: registersNext("D"), want: sameGrant(),
				expect: []keyWant{{holder: "B", waiters: "1", ttl: 1000 * ms},
					{suffix: ":waiters", members: []string{"D"}, under: []string{"B"}, ttl: setTTL(1000 * ms)}}},
			{at: 400 * ms, script: rel, holder: "B", lease: 1000 * ms, ownFence: true, want: handedTo("D"),
				expect: []keyWant{{holder: "D", waiters: "1", ttl: offer, handed: true}, {suffix: ":waiters", absent: true}}},
			{at: 450 * ms, script: acq, holder: "D", lease: 1000 * ms, extra: registers, want: sameGrant()},
			{at: 500 * ms, script: rel, holder: "D", lease: 1000 * ms, ownFence: true, want: integer(1), expect: retired(mutexFamily)},
			// A free lock (a tombstone) taken with ARGV[5]: F registered.
			{at: 600 * ms, script: acq, holder: "E", lease: 1000 * ms, extra: registersNext("F"), want: granted(),
				expect: []keyWant{{holder: "E", waiters: "1", ttl: 1000 * ms},
					{suffix: ":waiters", members: []string{"F"}, under: []string{"E"}, ttl: setTTL(1000 * ms)}}},
			// Busy: G registers, H is not.
			{at: 650 * ms, script: acq, holder: "G", lease: 1000 * ms, extra: registersNext("H"), want: busy(950),
				expect: []keyWant{{suffix: ":waiters", members: []string{"F", "G"}, under: []string{"E", "E"}}}},
			{at: 700 * ms, script: acq, holder: "E", lease: 1000 * ms, extra: registersNext("E"),
				want: fails("ERR lockgen: next waiter must be a holder id other than the caller's"), unchanged: true},
			{at: 750 * ms, script: rel, holder: "E", lease: 1000 * ms, ownFence: true, want: handedTo("F"),
				expect: []keyWant{{holder: "F", waiters: "1", handed: true}, {suffix: ":waiters", members: []string{"G"}}}},
			{at: 800 * ms, script: rel, holder: "F", lease: 1000 * ms, want: handedTo("G"),
				expect: []keyWant{{holder: "G", waiters: "1", handed: true}, {suffix: ":waiters", absent: true}}},
			{at: 850 * ms, script: rel, holder: "G", lease: 1000 * ms, want: integer(1), expect: retired(mutexFamily)},
		},
		wakes: []string{grantWake("B"), takenWake("B"), grantWake("D"), takenWake("D"), "all",
			grantWake("F"), grantWake("G"), "all"},
	}
}

// Invariant: a claim sent as a renewal (mutex_renew with ARGV[4], the
// runtime's claim of an offer it learnt from its own release reply and
// counts held already) claims as mutex_acquire does (full lease, the next
// waiter registered under the offer's fence, "taken" published), but never
// takes a lock that is not the claimant's: once the offer has lapsed it is
// refused and changes nothing, even with the lock free, where
// mutex_acquire would grant it anew.
func renewClaims() *scenario {
	acq, rel, renew := lua.MutexAcquire, lua.MutexRelease, lua.MutexRenew
	return &scenario{
		name: "mutex-renew-claim", fam: mutexFamily,
		steps: []step{
			{at: 0, script: acq, holder: "A", lease: 1000 * ms, extra: registers, want: granted()},
			{at: 100 * ms, script: acq, holder: "B", lease: 1000 * ms, extra: registers, want: busy(900)},
			{at: 200 * ms, script: rel, holder: "A", lease: 1000 * ms, ownFence: true, want: handedTo("B"),
				expect: []keyWant{{holder: "B", waiters: "1", ttl: offer, handed: true}, {suffix: ":waiters", absent: true}}},
			{at: 250 * ms, script: renew, holder: "B", lease: 1000 * ms, extra: []string{"D"}, want: integer(1),
				expect: []keyWant{{holder: "B", waiters: "1", ttl: 1000 * ms},
					{suffix: ":waiters", members: []string{"D"}, under: []string{"B"}, ttl: setTTL(1000 * ms)}}},
			// The offer to D lapses (at 800 ms) unclaimed, and E takes the
			// lock: D's claim then is refused and leaves E's lock alone.
			{at: 300 * ms, script: rel, holder: "B", lease: 1000 * ms, ownFence: true, want: handedTo("D"),
				expect: []keyWant{{holder: "D", waiters: "1", ttl: offer, handed: true}, {suffix: ":waiters", absent: true}}},
			{at: 1100 * ms, script: acq, holder: "E", lease: 1000 * ms, extra: registers, want: granted()},
			{at: 1200 * ms, script: renew, holder: "D", lease: 1000 * ms, extra: []string{""}, want: integer(0), unchanged: true},
			{at: 1300 * ms, script: renew, holder: "E", lease: 1000 * ms, extra: []string{"E"},
				want: fails("ERR lockgen: next waiter must be a holder id other than the caller's"), unchanged: true},
			// Named on an unmarked lock (never the runtime's case: an
			// offer is marked), the next waiter is registered and the
			// lock marked, so that the release offers it the lock.
			{at: 1350 * ms, script: renew, holder: "E", lease: 1000 * ms, extra: []string{"F"}, want: integer(1),
				expect: []keyWant{{holder: "E", waiters: "1", ttl: 1000 * ms},
					{suffix: ":waiters", members: []string{"F"}, under: []string{"E"}, ttl: setTTL(1000 * ms)}}},
			{at: 1400 * ms, script: rel, holder: "E", lease: 1000 * ms, ownFence: true, want: handedTo("F"),
				expect: []keyWant{{holder: "F", waiters: "1", ttl: offer, handed: true}, {suffix: ":waiters", absent: true}}},
			// F's offer lapsed (at 1900 ms) and nobody took the lock: it
			// was nobody else's since, and F's claim gives it the lease.
			{at: 2200 * ms, script: renew, holder: "F", lease: 1000 * ms, extra: []string{""}, want: integer(1),
				expect: []keyWant{{holder: "F", waiters: "1", ttl: 1000 * ms}}},
			{at: 2300 * ms, script: rel, holder: "F", lease: 1000 * ms, ownFence: true, want: integer(1), expect: retired(mutexFamily)},
		},
		wakes: []string{grantWake("B"), takenWake("B"), grantWake("D"), takenWake("E"), grantWake("F"), takenWake("F"), "all"},
	}
}

// A release that names a waiter of its own process (ARGV[5]) offers the
// lock to it ahead of earlier registrations, if it is registered; one not
// registered (gave up, or not yet registered) is passed over for the first
// registration, and so is the releaser itself.
func nearHandOver() *scenario {
	acq, rel := lua.MutexAcquire, lua.MutexRelease
	return &scenario{
		name: "mutex-near-hand-over", fam: mutexFamily,
		steps: []step{
			{at: 0, script: acq, holder: "A", lease: 1000 * ms, extra: registers, want: granted()},
			{at: 100 * ms, script: acq, holder: "B", lease: 1000 * ms, extra: registers, want: busy(900)},
			{at: 110 * ms, script: acq, holder: "C", lease: 1000 * ms, extra: registers, want: busy(890)},
			{at: 200 * ms, script: rel, holder: "A", lease: 1000 * ms, ownFence: true, extra: []string{"C"}, want: handedTo("C"),
				expect: []keyWant{{holder: "C", waiters: "1", ttl: offer, handed: true},
					{suffix: ":waiters", members: []string{"B"}, under: []string{"A"}}}},
			{at: 250 * ms, script: acq, holder: "C", lease: 1000 * ms, extra: registers, want: sameGrant()},
			{at: 300 * ms, script: rel, holder: "C", lease: 1000 * ms, ownFence: true, extra: []string{"X"}, want: handedTo("B"),
				expect: []keyWant{{holder: "B", waiters: "1", ttl: offer, handed: true}, {suffix: ":waiters", absent: true}}},
			{at: 350 * ms, script: acq, holder: "B", lease: 1000 * ms, extra: registers, want: sameGrant()},
			{at: 400 * ms, script: rel, holder: "B", lease: 1000 * ms, ownFence: true, extra: []string{"B"}, want: integer(1), expect: retired(mutexFamily)},
		},
		wakes: []string{grantWake("C"), takenWake("C"), grantWake("B"), takenWake("B"), "all"},
	}
}

// The holder's own acquire again (a retried call) with ARGV[5], on a lock
// nobody is registered for: the next waiter is registered and B marked,
// and, B being marked, "taken" is published as for a claim (though no
// offer was out: a message nobody waits for). A's release then offers the
// lock to A2.
func holderRegistersNext() *scenario {
	acq, rel := lua.MutexAcquire, lua.MutexRelease
	return &scenario{
		name: "mutex-holder-registers-next", fam: mutexFamily,
		steps: []step{
			{at: 0, script: acq, holder: "A", lease: 1000 * ms, extra: registers, want: granted(),
				expect: []keyWant{{holder: "A", waiters: "0"}}},
			{at: 100 * ms, script: acq, holder: "A", lease: 1000 * ms, extra: registersNext("A2"), want: sameGrant(),
				expect: []keyWant{{holder: "A", waiters: "1", ttl: 1000 * ms},
					{suffix: ":waiters", members: []string{"A2"}, under: []string{"A"}, ttl: setTTL(1000 * ms)}}},
			{at: 200 * ms, script: rel, holder: "A", lease: 1000 * ms, ownFence: true, want: handedTo("A2"),
				expect: []keyWant{{holder: "A2", waiters: "1", ttl: offer, handed: true}, {suffix: ":waiters", absent: true}}},
			{at: 300 * ms, script: rel, holder: "A2", lease: 1000 * ms, want: integer(1), expect: retired(mutexFamily)},
		},
		wakes: []string{takenWake("A"), grantWake("A2"), "all"},
	}
}

// Invariant: a registered waiter that tries again while the holder still
// holds changes nothing (not even the set's TTL) and costs Redis GET,
// PTTL and ZADD only (TestCommandCost, "mutex busy, already registered",
// pins the commands); each try is told the holder's lease left.
func idleWaiterCost() *scenario {
	acq := lua.MutexAcquire
	return &scenario{
		name: "mutex-idle-waiter-cost", fam: mutexFamily,
		steps: []step{
			{at: 0, script: acq, holder: "A", lease: 2000 * ms, extra: registers, want: granted()},
			{at: 100 * ms, script: acq, holder: "B", lease: 1000 * ms, extra: registers, want: busy(1000),
				expect: []keyWant{{holder: "A", waiters: "1"}, {suffix: ":waiters", members: []string{"B"}, ttl: setTTL(1000 * ms)}}},
			{at: 200 * ms, script: acq, holder: "B", lease: 1000 * ms, extra: registers, want: busy(1000), unchanged: true},
			{at: 1500 * ms, script: acq, holder: "B", lease: 1000 * ms, extra: registers, want: busy(500), unchanged: true},
			{at: 1600 * ms, script: acq, holder: "B", lease: 1000 * ms, extra: registersNext("C"), want: busy(400), unchanged: true},
		},
	}
}

// Invariant: a release never offers the lock to a registration protocol 1
// made (scored by a deadline in ms, above zero), whose runtime would take
// the offer's message for the grant; such registrations go, and everyone
// is woken (protocol_test.go plays this with protocol 1's own scripts).
// B's registration, withdrawn, left B marked.
func protocol1Registration() *scenario {
	acq, rel := lua.MutexAcquire, lua.MutexRelease
	set := "lockgen:mutex:{mutex-protocol1-registration}:waiters"
	return &scenario{
		name: "mutex-protocol1-registration", fam: mutexFamily,
		steps: []step{
			{at: 0, script: acq, holder: "A", lease: 1000 * ms, extra: registers, want: granted()},
			{at: 100 * ms, script: acq, holder: "B", lease: 1000 * ms, extra: registers, want: busy(900)},
			{at: 150 * ms, script: rel, holder: "B", lease: 1000 * ms, want: integer(0), expect: []keyWant{{holder: "A", waiters: "1"}}},
			{at: 200 * ms, raw: []string{"ZADD", set, "1700000060000", "W"}, want: integer(1)},
			{at: 200 * ms, raw: []string{"PEXPIRE", set, "60000"}, want: integer(1)},
			{at: 300 * ms, script: rel, holder: "A", lease: 1000 * ms, ownFence: true, want: integer(1), expect: retired(mutexFamily)},
		},
		wakes: []string{"all"},
	}
}

// Invariant: a release in "all" mode (ARGV[5], what a quorum sends)
// offers to nobody: the registrations go, the lock is a tombstone at
// once, and every waiter is woken to try.
func releaseToAll() *scenario {
	acq, rel := lua.MutexAcquire, lua.MutexRelease
	return &scenario{
		name: "mutex-release-to-all", fam: mutexFamily,
		steps: []step{
			{at: 0, script: acq, holder: "A", lease: 1000 * ms, extra: registers, want: granted()},
			{at: 100 * ms, script: acq, holder: "B", lease: 1000 * ms, extra: registers, want: busy(900)},
			{at: 110 * ms, script: acq, holder: "C", lease: 1000 * ms, extra: registers, want: busy(890)},
			{at: 200 * ms, script: rel, holder: "A", lease: 1000 * ms, extra: []string{"", "", "all"}, want: integer(1),
				expect: []keyWant{{suffix: ":waiters", absent: true}}},
			{at: 210 * ms, script: acq, holder: "C", lease: 1000 * ms, extra: registers, want: granted()},
		},
		wakes: []string{"all"},
	}
}

// TestOfferMatchesThePrelude: the scenarios' offer is LG_OFFER_MS.
func TestOfferMatchesThePrelude(t *testing.T) {
	m := regexp.MustCompile(`(?m)^local LG_OFFER_MS = (\d+)$`).FindStringSubmatch(lua.Prelude())
	if m == nil {
		t.Fatal("prelude.lua defines no LG_OFFER_MS")
	}
	if n, _ := strconv.Atoi(m[1]); int64(n) != offer.Milliseconds() {
		t.Errorf("LG_OFFER_MS is %s, the scenarios' offer %v", m[1], offer)
	}
}
