package gopherlua_test

import (
	"time"

	"github.com/lockgen/lockgen/lua"
)

// mutexHandOverScenarios: the release of a marked mutex (waiters 1) hands
// it to the live registered waiter whose registration ends first: B becomes
// "<waiter> <new fence> 1" with PX = that registration's end - now, and
// "grant:<fence>:<waiter>" is published. The new grant stays marked, as
// others may still be registered.
func mutexHandOverScenarios() []*scenario {
	acq, rel := lua.MutexAcquire, lua.MutexRelease
	return []*scenario{
		{
			// Waiters handed the lock one after another. C keeps its
			// registration alive while B holds (as the runtime does every
			// window/3); B's grant, marked by the hand-over, needs no new
			// mark for it. A caller that tries once neither registers nor
			// marks, so C's release, with nobody registered, retires the
			// lock without a word and the try-once caller takes it.
			name: "mutex-waiter-chain", fam: mutexFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 2000 * ms, extra: window(500 * ms), want: granted()},
				{at: 10 * ms, script: acq, holder: "B", lease: 2000 * ms, extra: window(1000 * ms), want: busy(1000)},
				{at: 20 * ms, script: acq, holder: "C", lease: 2000 * ms, extra: window(1000 * ms), want: busy(1000)},
				{at: 100 * ms, script: rel, holder: "A", lease: 2000 * ms, want: handedTo("B"),
					expect: []keyWant{{holder: "B", waiters: "1", ttl: 910 * ms, handed: true},
						{suffix: ":waiters", members: []string{"C"}, deadlines: []time.Duration{1020 * ms}}}},
				{at: 200 * ms, script: acq, holder: "C", lease: 2000 * ms, extra: window(1000 * ms), want: busy(1000),
					expect: []keyWant{{holder: "B", waiters: "1", ttl: 810 * ms},
						{suffix: ":waiters", members: []string{"C"}, deadlines: []time.Duration{1200 * ms}, ttl: 1000 * ms}}},
				{at: 300 * ms, script: rel, holder: "B", lease: 2000 * ms, want: handedTo("C"),
					expect: []keyWant{{holder: "C", waiters: "1", ttl: 900 * ms, handed: true}, {suffix: ":waiters", absent: true}}},
				{at: 400 * ms, script: acq, holder: "D", lease: 2000 * ms, extra: window(0), want: busy(800), unchanged: true},
				{at: 500 * ms, script: rel, holder: "C", lease: 2000 * ms, want: integer(1), expect: retired(mutexFamily)},
				{at: 500 * ms, script: acq, holder: "D", lease: 2000 * ms, extra: window(0), want: granted(),
					expect: []keyWant{{holder: "D", waiters: "0", ttl: 2000 * ms}}},
				{at: 600 * ms, script: rel, holder: "D", lease: 2000 * ms, want: integer(1), expect: retired(mutexFamily)},
			},
			wakes: []string{grantWake("B"), grantWake("C"), "all"},
		},
		{
			// A release that finds only lapsed registrations retires the
			// lock and publishes nothing. (B:waiters outlives them here
			// because another registration keeps it, then withdraws.)
			name: "mutex-all-lapsed", fam: mutexFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 3000 * ms, extra: window(500 * ms), want: granted()},
				{at: 100 * ms, script: acq, holder: "B", lease: 1000 * ms, extra: window(200 * ms), want: busy(200)},
				{at: 100 * ms, script: acq, holder: "C", lease: 1000 * ms, extra: window(200 * ms), want: busy(200)},
				{at: 150 * ms, script: acq, holder: "D", lease: 1000 * ms, extra: window(2000 * ms), want: busy(1000)},
				// B's and C's ended at 300 ms; D gives up.
				{at: 600 * ms, script: rel, holder: "D", lease: 1000 * ms, want: integer(0),
					expect: []keyWant{{suffix: ":waiters", members: []string{"B", "C"}}}},
				{at: 700 * ms, script: rel, holder: "A", lease: 3000 * ms, want: integer(1), expect: retired(mutexFamily)},
			},
			wakes: []string{"all"},
		},
	}
}
