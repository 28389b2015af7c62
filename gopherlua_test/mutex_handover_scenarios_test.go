package gopherlua_test

import (
	"github.com/lockgen/lockgen/lua"
)

// mutexHandOverScenarios: the release of a marked mutex (waiters 1) offers
// it to the first registration (the lowest fence, then the lowest id): B
// becomes "<waiter> <new fence> 1" with PX min(lease, LG_OFFER_MS) plus
// the floor, and "grant:<fence>:<waiter>" is published. The waiter claims
// the offer with mutex_acquire, which gives it the full lease and, the
// flag being set, publishes "taken:<fence>". An offer stays marked, as
// others may still be registered.
func mutexHandOverScenarios() []*scenario {
	acq, rel := lua.MutexAcquire, lua.MutexRelease
	return []*scenario{
		{
			// Waiters offered the lock one after another. C, registered
			// while A held, keeps its place while B holds: its retry
			// changes nothing. A caller that tries once neither registers
			// nor marks, so C's release, with nobody registered, retires
			// the lock ("all") and the try-once caller takes it.
			name: "mutex-waiter-chain", fam: mutexFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 2000 * ms, extra: registers, want: granted()},
				{at: 10 * ms, script: acq, holder: "B", lease: 2000 * ms, extra: registers, want: busy(1990)},
				{at: 20 * ms, script: acq, holder: "C", lease: 2000 * ms, extra: registers, want: busy(1980)},
				{at: 100 * ms, script: rel, holder: "A", lease: 2000 * ms, want: handedTo("B"),
					expect: []keyWant{{holder: "B", waiters: "1", ttl: offer, handed: true},
						{suffix: ":waiters", members: []string{"C"}, under: []string{"A"}}}},
				{at: 150 * ms, script: acq, holder: "B", lease: 2000 * ms, extra: registers, want: sameGrant(),
					expect: []keyWant{{holder: "B", waiters: "1", ttl: 2000 * ms}}},
				{at: 200 * ms, script: acq, holder: "C", lease: 2000 * ms, extra: registers, want: busy(1950), unchanged: true},
				{at: 300 * ms, script: rel, holder: "B", lease: 2000 * ms, want: handedTo("C"),
					expect: []keyWant{{holder: "C", waiters: "1", ttl: offer, handed: true}, {suffix: ":waiters", absent: true}}},
				{at: 350 * ms, script: acq, holder: "C", lease: 2000 * ms, extra: registers, want: sameGrant()},
				{at: 400 * ms, script: acq, holder: "D", lease: 2000 * ms, extra: window(0), want: busy(1950), unchanged: true},
				{at: 500 * ms, script: rel, holder: "C", lease: 2000 * ms, want: integer(1), expect: retired(mutexFamily)},
				{at: 500 * ms, script: acq, holder: "D", lease: 2000 * ms, extra: window(0), want: granted(),
					expect: []keyWant{{holder: "D", waiters: "0", ttl: 2000 * ms}}},
				{at: 600 * ms, script: rel, holder: "D", lease: 2000 * ms, want: integer(1), expect: retired(mutexFamily)},
			},
			wakes: []string{grantWake("B"), takenWake("B"), grantWake("C"), takenWake("C"), "all"},
		},
		{
			// Protocol 2 drops nothing by deadline: a release offers the
			// lock to the first registration still in the set. Only the
			// set's own expiry (stood for by a PEXPIRE of 1 ms: it comes
			// 2 x lease + floor after the newest registration) loses
			// registrations; a release that finds B marked and the set
			// gone retires the lock and wakes everyone ("all"), and the
			// waiters, woken, take it as free.
			name: "mutex-all-lapsed", fam: mutexFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 3000 * ms, extra: registers, want: granted()},
				{at: 100 * ms, script: acq, holder: "B", lease: 1000 * ms, extra: registers, want: busy(1000)},
				{at: 100 * ms, script: acq, holder: "C", lease: 1000 * ms, extra: registers, want: busy(1000),
					expect: []keyWant{{holder: "A", waiters: "1"}, {suffix: ":waiters", members: []string{"B", "C"}}}},
				{at: 200 * ms, raw: []string{"PEXPIRE", "lockgen:mutex:{mutex-all-lapsed}:waiters", "1"}, want: integer(1)},
				{at: 300 * ms, script: rel, holder: "A", lease: 3000 * ms, ownFence: true, want: integer(1), expect: retired(mutexFamily)},
				{at: 400 * ms, script: acq, holder: "B", lease: 1000 * ms, extra: registers, want: granted(),
					expect: []keyWant{{holder: "B", waiters: "0", ttl: 1000 * ms}}},
				{at: 500 * ms, script: rel, holder: "B", lease: 1000 * ms, ownFence: true, want: integer(1), expect: retired(mutexFamily)},
			},
			wakes: []string{"all"},
		},
	}
}
