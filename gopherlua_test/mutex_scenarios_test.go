package gopherlua_test

import (
	"strconv"
	"time"

	"github.com/lockgen/lockgen/lua"
)

const ms = time.Millisecond

// maxWindow is the largest ARGV[4] mutex_acquire takes, 2^31 ms (protocol
// 1's longest registration window; protocol 2 only tells 0 from the rest).
const maxWindow = (1 << 31) * ms

// window is mutex_acquire's ARGV[4]: 0 for a caller that tries once
// (registers nothing); any other integer ms registers the caller as a
// waiter. Protocol 2 no longer reads it as a window: a registration has no
// deadline of its own.
func window(d time.Duration) []string { return []string{strconv.FormatInt(d.Milliseconds(), 10)} }

// registers is the ARGV[4] of a caller that waits.
var registers = window(500 * ms)

// registersNext is the ARGV of a caller that waits and names the next
// waiter of its process (ARGV[5]), registered when the call takes or
// claims the lock.
func registersNext(next string) []string { return append(window(500*ms), next) }

// offer is LG_OFFER_MS: how long a release offers the lock to its first
// registered waiter (at most the releaser's lease). TestOfferMatchesThePrelude
// keeps it equal to the prelude's.
const offer = 500 * ms

// setTTL is the TTL a new registration gives B:waiters: twice the
// registering caller's lease plus the fence floor.
func setTTL(lease time.Duration) time.Duration { return 2*lease + lua.FenceFloor }

// mutexScenarios: B is "<holder> <fence> <-|+>" (scenarios spell the flag
// 0/1) with the lease plus the floor as TTL; a busy acquire that registers
// puts the caller in B:waiters scored by the holder's fence and marks B; a
// release of a marked B offers the lock to the first registration.
func mutexScenarios() []*scenario {
	acq, ren, rel := lua.MutexAcquire, lua.MutexRenew, lua.MutexRelease
	return []*scenario{
		{
			// Registration: ARGV[4] 0 (a caller that tries once) registers
			// nothing and leaves B unmarked; any other value registers
			// the caller under the holder's fence, gives the set
			// 2 x lease + floor and marks B. The busy reply's wait is
			// what is left of the holder's lease, at most the caller's
			// own. A retried busy attempt changes nothing at all. The
			// release offers the lock to the first registration for
			// LG_OFFER_MS; the waiter's claim (mutex_acquire) gives it
			// the full lease and says "taken".
			name: "mutex-register-window", fam: mutexFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 2000 * ms, extra: registers, want: granted(),
					expect: []keyWant{{holder: "A", waiters: "0", ttl: 2000 * ms}, {suffix: ":waiters", absent: true}}},
				{at: 100 * ms, script: acq, holder: "B", lease: 1000 * ms, extra: window(0), want: busy(1000), unchanged: true},
				{at: 100 * ms, script: acq, holder: "C", lease: 3000 * ms, extra: window(0), want: busy(1900), unchanged: true},
				{at: 200 * ms, script: acq, holder: "B", lease: 1000 * ms, extra: registers, want: busy(1000),
					expect: []keyWant{{holder: "A", waiters: "1", ttl: 1800 * ms},
						{suffix: ":waiters", members: []string{"B"}, under: []string{"A"}, ttl: setTTL(1000 * ms)}}},
				{at: 300 * ms, script: acq, holder: "B", lease: 1000 * ms, extra: registers, want: busy(1000), unchanged: true},
				{at: 400 * ms, script: acq, holder: "C", lease: 3000 * ms, extra: registers, want: busy(1600),
					expect: []keyWant{{suffix: ":waiters", members: []string{"B", "C"}, under: []string{"A", "A"}, ttl: setTTL(3000 * ms)}}},
				{at: 500 * ms, script: rel, holder: "A", lease: 2000 * ms, want: handedTo("B"),
					expect: []keyWant{{holder: "B", waiters: "1", ttl: offer, handed: true},
						{suffix: ":waiters", members: []string{"C"}, under: []string{"A"}}}},
				{at: 500 * ms, script: acq, holder: "B", lease: 1000 * ms, extra: registers, want: sameGrant(), leaseOnly: true,
					expect: []keyWant{{holder: "B", waiters: "1", ttl: 1000 * ms}}},
				{at: 600 * ms, script: ren, holder: "A", lease: 2000 * ms, want: integer(0), unchanged: true},
				{at: 600 * ms, script: rel, holder: "A", lease: 2000 * ms, want: integer(0), unchanged: true},
				{at: 700 * ms, script: rel, holder: "B", lease: 1000 * ms, want: handedTo("C"),
					expect: []keyWant{{holder: "C", waiters: "1", ttl: offer, handed: true}, {suffix: ":waiters", absent: true}}},
				{at: 750 * ms, script: acq, holder: "C", lease: 3000 * ms, extra: registers, want: sameGrant(), leaseOnly: true,
					expect: []keyWant{{holder: "C", waiters: "1", ttl: 3000 * ms}}},
				// Marked, but nobody is registered any more: retired, and
				// "all" for whoever registered and lost its registration.
				{at: 800 * ms, script: rel, holder: "C", lease: 3000 * ms, want: integer(1), expect: retired(mutexFamily)},
			},
			wakes: []string{grantWake("B"), takenWake("B"), grantWake("C"), takenWake("C"), "all"},
		},
		{
			// Order: registrations are served by the fence they registered
			// under, then by id. Those made under one holder tie (D, C and
			// B here go B, C, D, whatever their arrival); one made under a
			// later holder queues behind every one made before it, even
			// with an id that sorts first (A, registering under B's grant).
			name: "mutex-first-deadline", fam: mutexFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 5000 * ms, extra: registers, want: granted()},
				{at: 100 * ms, script: acq, holder: "D", lease: 1000 * ms, extra: registers, want: busy(1000)},
				{at: 150 * ms, script: acq, holder: "C", lease: 1000 * ms, extra: registers, want: busy(1000)},
				{at: 200 * ms, script: acq, holder: "B", lease: 1000 * ms, extra: registers, want: busy(1000),
					expect: []keyWant{{suffix: ":waiters", members: []string{"B", "C", "D"}, under: []string{"A", "A", "A"}}}},
				{at: 300 * ms, script: rel, holder: "A", lease: 5000 * ms, ownFence: true, want: handedTo("B"),
					expect: []keyWant{{holder: "B", waiters: "1", ttl: offer, handed: true},
						{suffix: ":waiters", members: []string{"C", "D"}, under: []string{"A", "A"}}}},
				{at: 350 * ms, script: acq, holder: "B", lease: 1000 * ms, extra: registers, want: sameGrant()},
				{at: 400 * ms, script: acq, holder: "E", lease: 1000 * ms, extra: registers, want: busy(950)},
				{at: 400 * ms, script: acq, holder: "A", lease: 1000 * ms, extra: registers, want: busy(950),
					expect: []keyWant{{suffix: ":waiters", members: []string{"C", "D", "A", "E"}, under: []string{"A", "A", "B", "B"}}}},
				{at: 500 * ms, script: rel, holder: "B", lease: 1000 * ms, ownFence: true, want: handedTo("C"),
					expect: []keyWant{{holder: "C", waiters: "1", handed: true}, {suffix: ":waiters", members: []string{"D", "A", "E"}}}},
				{at: 550 * ms, script: acq, holder: "C", lease: 1000 * ms, extra: registers, want: sameGrant()},
				{at: 600 * ms, script: rel, holder: "C", lease: 1000 * ms, ownFence: true, want: handedTo("D"),
					expect: []keyWant{{holder: "D", waiters: "1", handed: true}, {suffix: ":waiters", members: []string{"A", "E"}}}},
				{at: 650 * ms, script: acq, holder: "D", lease: 1000 * ms, extra: registers, want: sameGrant()},
				{at: 700 * ms, script: rel, holder: "D", lease: 1000 * ms, ownFence: true, want: handedTo("A"),
					expect: []keyWant{{holder: "A", waiters: "1", handed: true}, {suffix: ":waiters", members: []string{"E"}}}},
				{at: 750 * ms, script: acq, holder: "A", lease: 1000 * ms, extra: registers, want: sameGrant()},
				{at: 800 * ms, script: rel, holder: "A", lease: 1000 * ms, ownFence: true, want: handedTo("E"),
					expect: []keyWant{{holder: "E", waiters: "1", handed: true}, {suffix: ":waiters", absent: true}}},
				{at: 850 * ms, script: acq, holder: "E", lease: 1000 * ms, extra: registers, want: sameGrant()},
				{at: 900 * ms, script: rel, holder: "E", lease: 1000 * ms, ownFence: true, want: integer(1), expect: retired(mutexFamily)},
			},
			wakes: []string{grantWake("B"), takenWake("B"), grantWake("C"), takenWake("C"), grantWake("D"), takenWake("D"),
				grantWake("A"), takenWake("A"), grantWake("E"), takenWake("E"), "all"},
		},
		{
			// Lockers may register with different leases. The set lives
			// 2 x lease + floor after its newest registration, whatever
			// the lease of the older ones: D's short lease cuts the TTL
			// C's gave it (PEXPIRE, not GT). A registration lost with the
			// set (its expiry stood for here by a PEXPIRE of 1 ms: the
			// real one comes 10 s and more on) costs its waiter its
			// place, never the lock: B stays marked, and C's next busy
			// attempt registers it again, with a TTL of its own.
			name: "mutex-mixed-windows", fam: mutexFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 5000 * ms, extra: registers, want: granted()},
				{at: 100 * ms, script: acq, holder: "C", lease: 3000 * ms, extra: registers, want: busy(3000),
					expect: []keyWant{{suffix: ":waiters", members: []string{"C"}, ttl: setTTL(3000 * ms)}}},
				{at: 200 * ms, script: acq, holder: "D", lease: 200 * ms, extra: registers, want: busy(200),
					expect: []keyWant{{suffix: ":waiters", members: []string{"C", "D"}, under: []string{"A", "A"}, ttl: setTTL(200 * ms)}}},
				{at: 300 * ms, raw: []string{"PEXPIRE", "lockgen:mutex:{mutex-mixed-windows}:waiters", "1"}, want: integer(1)},
				{at: 400 * ms, raw: []string{"PTTL", "lockgen:mutex:{mutex-mixed-windows}:waiters"}, want: integer(-2),
					expect: []keyWant{{holder: "A", waiters: "1"}}},
				{at: 500 * ms, script: acq, holder: "C", lease: 3000 * ms, extra: registers, want: busy(3000),
					expect: []keyWant{{holder: "A", waiters: "1"},
						{suffix: ":waiters", members: []string{"C"}, under: []string{"A"}, ttl: setTTL(3000 * ms)}}},
				{at: 600 * ms, script: rel, holder: "A", lease: 5000 * ms, ownFence: true, want: handedTo("C"),
					expect: []keyWant{{holder: "C", waiters: "1", ttl: offer, handed: true}, {suffix: ":waiters", absent: true}}},
				{at: 650 * ms, script: acq, holder: "C", lease: 3000 * ms, extra: registers, want: sameGrant()},
				{at: 700 * ms, script: rel, holder: "C", lease: 3000 * ms, ownFence: true, want: integer(1), expect: retired(mutexFamily)},
			},
			wakes: []string{grantWake("C"), takenWake("C"), "all"},
		},
		{
			// A waiter that gives up releases: not the owner, it withdraws
			// its registration (0), and others keep theirs. A registered
			// waiter that finds the lock free (its holder's lease ran out)
			// takes it, and its registration goes: a release must not
			// offer the lock to a caller that has it. A waiter offered the
			// lock that gives up declines the offer with the same
			// release, which passes the lock on like any release.
			name: "mutex-withdraw", fam: mutexFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 1000 * ms, extra: registers, want: granted()},
				{at: 100 * ms, script: acq, holder: "B", lease: 1000 * ms, extra: registers, want: busy(900)},
				{at: 150 * ms, script: acq, holder: "C", lease: 1000 * ms, extra: registers, want: busy(850)},
				{at: 160 * ms, script: acq, holder: "D", lease: 1000 * ms, extra: registers, want: busy(840),
					expect: []keyWant{{suffix: ":waiters", members: []string{"B", "C", "D"}, under: []string{"A", "A", "A"}}}},
				{at: 200 * ms, script: rel, holder: "B", lease: 1000 * ms, want: integer(0),
					expect: []keyWant{{holder: "A", waiters: "1", ttl: 800 * ms},
						{suffix: ":waiters", members: []string{"C", "D"}, under: []string{"A", "A"}}}},
				{at: 250 * ms, script: rel, holder: "B", lease: 1000 * ms, want: integer(0), unchanged: true},
				{at: 250 * ms, script: ren, holder: "B", lease: 1000 * ms, want: integer(0), unchanged: true},
				// A's lease ended at 1000 ms, unreleased.
				{at: 1200 * ms, script: acq, holder: "C", lease: 1000 * ms, extra: registers, want: granted(),
					expect: []keyWant{{holder: "C", waiters: "1", ttl: 1000 * ms},
						{suffix: ":waiters", members: []string{"D"}, under: []string{"A"}}}},
				{at: 1300 * ms, script: rel, holder: "C", lease: 1000 * ms, ownFence: true, want: handedTo("D"),
					expect: []keyWant{{holder: "D", waiters: "1", ttl: offer, handed: true}, {suffix: ":waiters", absent: true}}},
				// D gave up: its release declines the offer; nobody is left.
				{at: 1400 * ms, script: rel, holder: "D", lease: 1000 * ms, want: integer(1), expect: retired(mutexFamily)},
			},
			wakes: []string{grantWake("D"), "all"},
		},
		{
			// The set outlives no registration by more than its TTL: when
			// it runs out while A still holds (stood for by a PEXPIRE of
			// 1 ms), B's next busy attempt registers it again. A holder
			// that vanishes: B, told to come back when A's lease ends,
			// takes the lock then, and its registration goes.
			name: "mutex-expiry", fam: mutexFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 2000 * ms, extra: registers, want: granted()},
				{at: 100 * ms, script: acq, holder: "B", lease: 2000 * ms, extra: registers, want: busy(1900),
					expect: []keyWant{{suffix: ":waiters", members: []string{"B"}, ttl: setTTL(2000 * ms)}}},
				{at: 700 * ms, raw: []string{"PEXPIRE", "lockgen:mutex:{mutex-expiry}:waiters", "1"}, want: integer(1)},
				{at: 800 * ms, raw: []string{"PTTL", "lockgen:mutex:{mutex-expiry}:waiters"}, want: integer(-2)},
				{at: 1000 * ms, script: acq, holder: "B", lease: 2000 * ms, extra: registers, want: busy(1000),
					expect: []keyWant{{holder: "A", waiters: "1"},
						{suffix: ":waiters", members: []string{"B"}, under: []string{"A"}, ttl: setTTL(2000 * ms)}}},
				{at: 2100 * ms, script: acq, holder: "B", lease: 2000 * ms, extra: registers, want: granted(),
					expect: []keyWant{{holder: "B", waiters: "0", ttl: 2000 * ms}, {suffix: ":waiters", absent: true}}},
				{at: 2200 * ms, script: ren, holder: "A", lease: 2000 * ms, want: integer(0), unchanged: true},
				{at: 2200 * ms, script: rel, holder: "A", lease: 2000 * ms, want: integer(0), unchanged: true},
				{at: 2200 * ms, script: ren, holder: "B", lease: 2000 * ms, want: integer(1), leaseOnly: true,
					expect: []keyWant{{holder: "B", ttl: 2000 * ms}}},
				{at: 2300 * ms, script: rel, holder: "B", lease: 2000 * ms, want: integer(1), expect: retired(mutexFamily)},
				{at: 2400 * ms, raw: []string{"PTTL", "lockgen:mutex:{mutex-expiry}:waiters"}, want: integer(-2)},
			},
			wakes: nil,
		},
		{
			// ARGV[4] only says whether the caller registers: the largest
			// value (2^31, protocol 1's longest window) and the smallest
			// (1) register alike, and the set's TTL follows the lease,
			// not ARGV[4]. Both withdraw; the release then finds B marked
			// and the set gone, and wakes everyone.
			name: "mutex-window-bounds", fam: mutexFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 1000 * ms, extra: window(maxWindow), want: granted()},
				{at: 100 * ms, script: acq, holder: "B", lease: 1000 * ms, extra: window(maxWindow), want: busy(900),
					expect: []keyWant{{holder: "A", waiters: "1"},
						{suffix: ":waiters", members: []string{"B"}, under: []string{"A"}, ttl: setTTL(1000 * ms)}}},
				{at: 150 * ms, script: acq, holder: "C", lease: 1000 * ms, extra: window(ms), want: busy(850),
					expect: []keyWant{{suffix: ":waiters", members: []string{"B", "C"}, under: []string{"A", "A"}, ttl: setTTL(1000 * ms)}}},
				{at: 200 * ms, script: rel, holder: "B", lease: 1000 * ms, want: integer(0),
					expect: []keyWant{{suffix: ":waiters", members: []string{"C"}}}},
				{at: 250 * ms, script: rel, holder: "C", lease: 1000 * ms, want: integer(0),
					expect: []keyWant{{suffix: ":waiters", absent: true}}},
				{at: 300 * ms, script: rel, holder: "A", lease: 1000 * ms, want: integer(1), expect: retired(mutexFamily)},
			},
			wakes: []string{"all"},
		},
		{
			// A release that knows its fence (ARGV[4], as the runtime
			// sends it) gives the lock back in one write; a wrong,
			// malformed or missing guess costs a write more, never a
			// different outcome: the tombstone keeps the fence B held, a
			// lock that is someone else's is left exactly as it was (TTL
			// included), and an absent B stays absent. The tombstone
			// keeps B's TTL: the rest of the lease, then the floor.
			name: "mutex-release-guess", fam: mutexFamily,
			steps: []step{
				{at: 0, script: rel, holder: "A", lease: 1000 * ms, extra: []string{"7"}, want: integer(0), unchanged: true},
				{at: 0, script: acq, holder: "A", lease: 1000 * ms, extra: registers, want: granted()},
				{at: 100 * ms, script: rel, holder: "A", lease: 1000 * ms, ownFence: true, want: integer(1),
					expect: []keyWant{{holder: tombstone, ttl: 900 * ms}, {suffix: ":waiters", absent: true}}},
				{at: 200 * ms, script: acq, holder: "B", lease: 1000 * ms, extra: registers, want: granted()},
				{at: 300 * ms, script: rel, holder: "B", lease: 1000 * ms, extra: []string{"12345"}, want: integer(1),
					expect: []keyWant{{holder: tombstone, ttl: 900 * ms}}},
				{at: 400 * ms, script: acq, holder: "C", lease: 1000 * ms, extra: registers, want: granted()},
				// Not C: D guesses C's fence, A its own old one.
				{at: 500 * ms, script: rel, holder: "D", lease: 1000 * ms, ownFence: true, want: integer(0), unchanged: true},
				{at: 500 * ms, script: rel, holder: "A", lease: 1000 * ms, ownFence: true, want: integer(0), unchanged: true},
				{at: 600 * ms, script: rel, holder: "C", lease: 1000 * ms, extra: []string{"not a fence"}, want: integer(1),
					expect: []keyWant{{holder: tombstone, ttl: 800 * ms}}},
				// Released twice: the second finds the tombstone, and
				// leaves it as it was.
				{at: 700 * ms, script: rel, holder: "C", lease: 1000 * ms, ownFence: true, want: integer(0), unchanged: true},
				// With a waiter registered, the guess is right but the flag
				// is not: the lock is offered to F. F, offered the lock,
				// releases with the offer's fence: nobody else is
				// registered, so a tombstone with the rest of the offer.
				{at: 800 * ms, script: acq, holder: "E", lease: 1000 * ms, extra: registers, want: granted()},
				{at: 900 * ms, script: acq, holder: "F", lease: 1000 * ms, extra: registers, want: busy(900)},
				{at: 1000 * ms, script: rel, holder: "E", lease: 1000 * ms, ownFence: true, want: handedTo("F"),
					expect: []keyWant{{holder: "F", waiters: "1", ttl: offer, handed: true}, {suffix: ":waiters", absent: true}}},
				{at: 1100 * ms, script: rel, holder: "F", lease: 1000 * ms, ownFence: true, want: integer(1),
					expect: []keyWant{{holder: tombstone, ttl: offer - 100*ms}}},
			},
			wakes: []string{grantWake("F"), "all"},
		},
		{
			name: "mutex-owner", fam: mutexFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 1000 * ms, extra: registers, want: granted()},
				{at: 10 * ms, script: ren, holder: "B", lease: 5000 * ms, want: integer(0), unchanged: true},
				{at: 20 * ms, script: rel, holder: "B", lease: 1000 * ms, want: integer(0), unchanged: true},
				{at: 30 * ms, script: ren, holder: "A", lease: 3000 * ms, want: integer(1), leaseOnly: true,
					expect: []keyWant{{holder: "A", ttl: 3000 * ms}}},
				{at: 40 * ms, script: rel, holder: "A", lease: 1000 * ms, want: integer(1), expect: retired(mutexFamily)},
				{at: 50 * ms, script: rel, holder: "A", lease: 1000 * ms, want: integer(0)},
				{at: 60 * ms, script: ren, holder: "A", lease: 1000 * ms, want: integer(0)},
			},
		},
	}
}
