package gopherlua_test

import (
	"strconv"
	"time"

	"github.com/lockgen/lockgen/lua"
)

const ms = time.Millisecond

// maxWindow is the longest registration window mutex_acquire takes, 2^31 ms.
const maxWindow = (1 << 31) * ms

// window is mutex_acquire's ARGV[4]: how long a busy reply registers the
// caller for a hand-over (0: not at all).
func window(d time.Duration) []string { return []string{strconv.FormatInt(d.Milliseconds(), 10)} }

// mutexScenarios: B is "<holder> <fence> <waiters>" with the lease as TTL;
// a busy acquire with a window registers the caller in B:waiters (score:
// the end of its registration) and marks B (waiters 1).
func mutexScenarios() []*scenario {
	acq, ren, rel := lua.MutexAcquire, lua.MutexRenew, lua.MutexRelease
	return []*scenario{
		{
			// A window registers the caller until now + window, and B:waiters
			// lives as long; window 0 (a caller that tries once) registers
			// nothing and leaves B unmarked. A retried busy attempt moves
			// the caller's registration on, nothing more. The release hands
			// the lock to the registration that ends first, for what is left
			// of it; the waiter's own retry then is the same grant.
			name: "mutex-register-window", fam: mutexFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 2000 * ms, extra: window(500 * ms), want: granted(),
					expect: []keyWant{{holder: "A", waiters: "0", ttl: 2000 * ms}, {suffix: ":waiters", absent: true}}},
				{at: 100 * ms, script: acq, holder: "B", lease: 1000 * ms, extra: window(0), want: busy(1000), unchanged: true},
				{at: 100 * ms, script: acq, holder: "C", lease: 3000 * ms, extra: window(0), want: busy(1900), unchanged: true},
				{at: 200 * ms, script: acq, holder: "B", lease: 1000 * ms, extra: window(600 * ms), want: busy(600),
					expect: []keyWant{{holder: "A", waiters: "1", ttl: 1800 * ms},
						{suffix: ":waiters", members: []string{"B"}, deadlines: []time.Duration{800 * ms}, ttl: 600 * ms}}},
				{at: 300 * ms, script: acq, holder: "B", lease: 1000 * ms, extra: window(600 * ms), want: busy(600),
					expect: []keyWant{{holder: "A", waiters: "1", ttl: 1700 * ms},
						{suffix: ":waiters", members: []string{"B"}, deadlines: []time.Duration{900 * ms}, ttl: 600 * ms}}},
				{at: 400 * ms, script: acq, holder: "C", lease: 3000 * ms, extra: window(1000 * ms), want: busy(1000),
					expect: []keyWant{{suffix: ":waiters", members: []string{"B", "C"}, deadlines: []time.Duration{900 * ms, 1400 * ms}, ttl: 1000 * ms}}},
				{at: 500 * ms, script: rel, holder: "A", lease: 2000 * ms, want: handedTo("B"),
					expect: []keyWant{{holder: "B", waiters: "1", ttl: 400 * ms, handed: true},
						{suffix: ":waiters", members: []string{"C"}, deadlines: []time.Duration{1400 * ms}, ttl: 900 * ms}}},
				// B missed the message: its next attempt finds the lock its
				// own and only restarts the lease.
				{at: 500 * ms, script: acq, holder: "B", lease: 1000 * ms, extra: window(600 * ms), want: sameGrant(), leaseOnly: true,
					expect: []keyWant{{holder: "B", waiters: "1", ttl: 1000 * ms}}},
				{at: 600 * ms, script: ren, holder: "A", lease: 2000 * ms, want: integer(0), unchanged: true},
				{at: 600 * ms, script: rel, holder: "A", lease: 2000 * ms, want: integer(0), unchanged: true},
				{at: 700 * ms, script: rel, holder: "B", lease: 1000 * ms, want: handedTo("C"),
					expect: []keyWant{{holder: "C", waiters: "1", ttl: 700 * ms, handed: true}, {suffix: ":waiters", absent: true}}},
				// Marked, but nobody is registered any more: retired,
				// nothing published.
				{at: 800 * ms, script: rel, holder: "C", lease: 3000 * ms, want: integer(1), expect: retired(mutexFamily)},
			},
			wakes: []string{grantWake("B"), grantWake("C"), "all"},
		},
		{
			// The lock goes to the live registration that ends first: a
			// lapsed one is dropped, and a retry that moves a registration
			// on moves its waiter back.
			name: "mutex-first-deadline", fam: mutexFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 5000 * ms, extra: window(500 * ms), want: granted()},
				{at: 100 * ms, script: acq, holder: "B", lease: 1000 * ms, extra: window(300 * ms), want: busy(300)},
				{at: 150 * ms, script: acq, holder: "C", lease: 1000 * ms, extra: window(2000 * ms), want: busy(1000)},
				{at: 200 * ms, script: acq, holder: "D", lease: 1000 * ms, extra: window(1500 * ms), want: busy(1000)},
				{at: 250 * ms, script: acq, holder: "E", lease: 1000 * ms, extra: window(1500 * ms), want: busy(1000)},
				{at: 300 * ms, script: acq, holder: "D", lease: 1000 * ms, extra: window(1500 * ms), want: busy(1000),
					expect: []keyWant{{suffix: ":waiters", members: []string{"B", "E", "D", "C"},
						deadlines: []time.Duration{400 * ms, 1750 * ms, 1800 * ms, 2150 * ms}}}},
				// B's registration ended at 400 ms.
				{at: 600 * ms, script: rel, holder: "A", lease: 5000 * ms, want: handedTo("E"),
					expect: []keyWant{{holder: "E", waiters: "1", ttl: 1150 * ms, handed: true},
						{suffix: ":waiters", members: []string{"D", "C"}, deadlines: []time.Duration{1800 * ms, 2150 * ms}}}},
				{at: 700 * ms, script: rel, holder: "E", lease: 1000 * ms, want: handedTo("D"),
					expect: []keyWant{{holder: "D", waiters: "1", ttl: 1100 * ms, handed: true}, {suffix: ":waiters", members: []string{"C"}}}},
				{at: 800 * ms, script: rel, holder: "D", lease: 1000 * ms, want: handedTo("C"),
					expect: []keyWant{{holder: "C", waiters: "1", ttl: 1350 * ms, handed: true}, {suffix: ":waiters", absent: true}}},
				{at: 900 * ms, script: rel, holder: "C", lease: 1000 * ms, want: integer(1), expect: retired(mutexFamily)},
			},
			wakes: []string{grantWake("E"), grantWake("D"), grantWake("C"), "all"},
		},
		{
			// Lockers may register with different windows. A short
			// registration must not cut B:waiters's TTL below a longer one
			// that lives on: C, registered until 3100 ms, is still handed
			// the lock at 1000 ms although D's registration (and the TTL
			// it asked for) ended at 400 ms.
			name: "mutex-mixed-windows", fam: mutexFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 5000 * ms, extra: window(500 * ms), want: granted()},
				{at: 100 * ms, script: acq, holder: "C", lease: 1000 * ms, extra: window(3000 * ms), want: busy(1000),
					expect: []keyWant{{suffix: ":waiters", members: []string{"C"}, ttl: 3000 * ms}}},
				{at: 200 * ms, script: acq, holder: "D", lease: 1000 * ms, extra: window(200 * ms), want: busy(200),
					expect: []keyWant{{suffix: ":waiters", members: []string{"D", "C"},
						deadlines: []time.Duration{400 * ms, 3100 * ms}, ttl: 200 * ms}}},
				// The shorter window cut C's registration short with the set:
				// nobody to hand the lock to, so every waiter is woken.
				{at: 1000 * ms, script: rel, holder: "A", lease: 5000 * ms, want: integer(1), expect: retired(mutexFamily)},
				{at: 1100 * ms, script: rel, holder: "C", lease: 1000 * ms, want: integer(0), unchanged: true},
			},
			wakes: []string{"all"},
		},
		{
			// A waiter that gives up releases: not the owner, it withdraws
			// its registration (0), and others keep theirs. A registered
			// waiter that finds the lock free (its holder's lease ran out)
			// takes it, and its registration goes: a release must not hand
			// the lock to a caller that has it.
			name: "mutex-withdraw", fam: mutexFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 1000 * ms, extra: window(500 * ms), want: granted()},
				{at: 100 * ms, script: acq, holder: "B", lease: 1000 * ms, extra: window(2000 * ms), want: busy(1000)},
				{at: 150 * ms, script: acq, holder: "C", lease: 1000 * ms, extra: window(2000 * ms), want: busy(1000),
					expect: []keyWant{{suffix: ":waiters", members: []string{"B", "C"}, deadlines: []time.Duration{2100 * ms, 2150 * ms}}}},
				{at: 200 * ms, script: rel, holder: "B", lease: 1000 * ms, want: integer(0),
					expect: []keyWant{{holder: "A", waiters: "1", ttl: 800 * ms},
						{suffix: ":waiters", members: []string{"C"}, deadlines: []time.Duration{2150 * ms}}}},
				{at: 250 * ms, script: rel, holder: "B", lease: 1000 * ms, want: integer(0), unchanged: true},
				{at: 250 * ms, script: ren, holder: "B", lease: 1000 * ms, want: integer(0), unchanged: true},
				{at: 1200 * ms, script: acq, holder: "C", lease: 1000 * ms, extra: window(2000 * ms), want: granted(),
					expect: []keyWant{{holder: "C", waiters: "0", ttl: 1000 * ms}, {suffix: ":waiters", absent: true}}},
				{at: 1300 * ms, script: rel, holder: "C", lease: 1000 * ms, want: integer(1), expect: retired(mutexFamily)},
			},
			// Nobody was handed anything.
			wakes: nil,
		},
		{
			// B's registration goes with B:waiters's TTL. After A's
			// lease, A's key is only the fence floor: B, registering
			// anew, is told to come back (no PTTL on a new
			// registration), and its next attempt, renewing the
			// registration, finds the lease over and takes the lock.
			name: "mutex-expiry", fam: mutexFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 2000 * ms, extra: window(500 * ms), want: granted()},
				{at: 100 * ms, script: acq, holder: "B", lease: 2000 * ms, extra: window(500 * ms), want: busy(500),
					expect: []keyWant{{suffix: ":waiters", ttl: 500 * ms}}},
				{at: 700 * ms, raw: []string{"EXISTS", "lockgen:mutex:{mutex-expiry}:waiters"}, want: integer(0)},
				{at: 2150 * ms, script: acq, holder: "B", lease: 2000 * ms, extra: window(500 * ms), want: busy(500),
					expect: []keyWant{{holder: "A"}, {suffix: ":waiters", members: []string{"B"}}}},
				{at: 2200 * ms, script: acq, holder: "B", lease: 2000 * ms, extra: window(500 * ms), want: granted(),
					expect: []keyWant{{holder: "B", waiters: "0", ttl: 2000 * ms}, {suffix: ":waiters", absent: true}}},
				{at: 2300 * ms, script: ren, holder: "A", lease: 2000 * ms, want: integer(0), unchanged: true},
				{at: 2300 * ms, script: rel, holder: "A", lease: 2000 * ms, want: integer(0), unchanged: true},
				{at: 2300 * ms, script: ren, holder: "B", lease: 2000 * ms, want: integer(1), leaseOnly: true,
					expect: []keyWant{{holder: "B", ttl: 2000 * ms}}},
				{at: 2400 * ms, script: rel, holder: "B", lease: 2000 * ms, want: integer(1), expect: retired(mutexFamily)},
				{at: 2500 * ms, raw: []string{"EXISTS", "lockgen:mutex:{mutex-expiry}:waiters"}, want: integer(0)},
			},
			wakes: nil,
		},
		{
			// The longest window, 2^31 ms, is taken as it is: B:waiters
			// lives that long (and goes with the withdrawal).
			name: "mutex-window-bounds", fam: mutexFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 1000 * ms, extra: window(maxWindow), want: granted()},
				{at: 100 * ms, script: acq, holder: "B", lease: 1000 * ms, extra: window(maxWindow), want: busy(1000),
					expect: []keyWant{{holder: "A", waiters: "1"},
						{suffix: ":waiters", members: []string{"B"}, deadlines: []time.Duration{100*ms + maxWindow}, ttl: maxWindow}}},
				{at: 200 * ms, script: rel, holder: "B", lease: 1000 * ms, want: integer(0),
					expect: []keyWant{{suffix: ":waiters", absent: true}}},
				{at: 300 * ms, script: rel, holder: "A", lease: 1000 * ms, want: integer(1), expect: retired(mutexFamily)},
			},
			// B withdrew: marked, nobody live, so everyone is woken.
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
				{at: 0, script: acq, holder: "A", lease: 1000 * ms, extra: window(500 * ms), want: granted()},
				{at: 100 * ms, script: rel, holder: "A", lease: 1000 * ms, ownFence: true, want: integer(1),
					expect: []keyWant{{holder: tombstone, ttl: 900 * ms}, {suffix: ":waiters", absent: true}}},
				{at: 200 * ms, script: acq, holder: "B", lease: 1000 * ms, extra: window(500 * ms), want: granted()},
				{at: 300 * ms, script: rel, holder: "B", lease: 1000 * ms, extra: []string{"12345"}, want: integer(1),
					expect: []keyWant{{holder: tombstone, ttl: 900 * ms}}},
				{at: 400 * ms, script: acq, holder: "C", lease: 1000 * ms, extra: window(500 * ms), want: granted()},
				// Not C: D guesses C's fence, A its own old one.
				{at: 500 * ms, script: rel, holder: "D", lease: 1000 * ms, ownFence: true, want: integer(0), unchanged: true},
				{at: 500 * ms, script: rel, holder: "A", lease: 1000 * ms, ownFence: true, want: integer(0), unchanged: true},
				{at: 600 * ms, script: rel, holder: "C", lease: 1000 * ms, extra: []string{"not a fence"}, want: integer(1),
					expect: []keyWant{{holder: tombstone, ttl: 800 * ms}}},
				// Released twice: the second finds the tombstone, and
				// leaves it as it was.
				{at: 700 * ms, script: rel, holder: "C", lease: 1000 * ms, ownFence: true, want: integer(0), unchanged: true},
				// With a waiter registered, the guess is right but the flag
				// is not: the lock is handed over.
				{at: 800 * ms, script: acq, holder: "E", lease: 1000 * ms, extra: window(500 * ms), want: granted()},
				{at: 900 * ms, script: acq, holder: "F", lease: 1000 * ms, extra: window(400 * ms), want: busy(400)},
				{at: 1000 * ms, script: rel, holder: "E", lease: 1000 * ms, ownFence: true, want: handedTo("F"),
					expect: []keyWant{{holder: "F", waiters: "1", ttl: 300 * ms, handed: true}, {suffix: ":waiters", absent: true}}},
				{at: 1100 * ms, script: rel, holder: "F", lease: 1000 * ms, ownFence: true, want: integer(1),
					expect: []keyWant{{holder: tombstone, ttl: 200 * ms}}},
			},
			wakes: []string{grantWake("F"), "all"},
		},
		{
			name: "mutex-owner", fam: mutexFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 1000 * ms, extra: window(500 * ms), want: granted()},
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
