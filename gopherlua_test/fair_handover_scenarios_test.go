package gopherlua_test

import "github.com/lockgen/lockgen/lua"

// fairHandOverScenarios: a fair lock is never left free while a live waiter
// is queued. Whoever finds it free (the last release, a newcomer's acquire,
// a heartbeat, a give-up) hands it straight to the first live waiter: the
// waiter leaves the queue, B becomes "<head> <new fence> 0" for what is
// left of the head's place, and "grant:<fence>:<head>" is published. A head
// that missed the message finds the lock its own at its next acquire (the
// same grant), or gives it back with its release.
func fairHandOverScenarios() []*scenario {
	acq, ren, rel, hb := lua.FairAcquire, lua.FairRenew, lua.FairRelease, lua.FairHeartbeat
	return []*scenario{
		{
			// The handed lock lives as long as the head's place would
			// have (its deadline minus now), not the releaser's lease nor
			// the head's full lease; a handed hold is released like any
			// other, with no claim first.
			name: "fair-release-hands-over", fam: fairFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 2000 * ms, want: granted()},
				{at: 100 * ms, script: acq, holder: "B", lease: 1000 * ms, want: busy(1000)},
				// B's place now lasts until 1400 ms.
				{at: 400 * ms, script: hb, holder: "B", lease: 1000 * ms, want: kept()},
				// C's until 1450 ms.
				{at: 450 * ms, script: acq, holder: "C", lease: 1000 * ms, want: busy(1000)},
				{at: 600 * ms, script: rel, holder: "A", lease: 2000 * ms, want: handedTo("B"),
					expect: []keyWant{{holder: "B", ttl: 800 * ms, handed: true},
						{suffix: ":queue", members: []string{"C"}}, {suffix: ":alive", members: []string{"C"}}}},
				{at: 700 * ms, script: rel, holder: "B", lease: 1000 * ms, want: handedTo("C"),
					expect: handedLast("C", 750*ms)},
				{at: 800 * ms, script: rel, holder: "C", lease: 1000 * ms, want: integer(1),
					expect: []keyWant{{holder: tombstone}}},
			},
			wakes: []string{grantWake("B"), grantWake("C")},
		},
		{
			// The grant message is lost. The head's heartbeat says it is
			// no longer queued (0); its retry finds the lock its own: the
			// same grant, lease restarted, and so does every retry after
			// it; one release ends it.
			name: "fair-claim-lost-grant", fam: fairFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 1000 * ms, want: granted()},
				{at: 100 * ms, script: acq, holder: "B", lease: 1000 * ms, want: busy(900)},
				{at: 150 * ms, script: acq, holder: "C", lease: 1000 * ms, want: busy(850)},
				{at: 200 * ms, script: rel, holder: "A", lease: 1000 * ms, want: handedTo("B"),
					expect: []keyWant{{holder: "B", ttl: 900 * ms, handed: true}, {suffix: ":queue", members: []string{"C"}}}},
				{at: 300 * ms, script: hb, holder: "B", lease: 1000 * ms, want: integer(0), unchanged: true},
				{at: 400 * ms, script: acq, holder: "B", lease: 1000 * ms, want: sameGrant(), leaseOnly: true,
					expect: []keyWant{{holder: "B", ttl: 1000 * ms}, {suffix: ":queue", members: []string{"C"}}}},
				{at: 500 * ms, script: acq, holder: "B", lease: 1000 * ms, want: sameGrant(), leaseOnly: true,
					expect: []keyWant{{holder: "B", ttl: 1000 * ms}}},
				// C's place ends at 1150 ms.
				{at: 800 * ms, script: rel, holder: "B", lease: 1000 * ms, want: handedTo("C"),
					expect: handedLast("C", 350*ms)},
				{at: 800 * ms, script: rel, holder: "B", lease: 1000 * ms, want: integer(0), unchanged: true},
				// The queue is empty: a heartbeat replies 0 at once.
				{at: 900 * ms, script: hb, holder: "C", lease: 1000 * ms, want: integer(0), unchanged: true},
				{at: 1000 * ms, script: acq, holder: "C", lease: 1000 * ms, want: sameGrant(),
					expect: []keyWant{{holder: "C", ttl: 1000 * ms}}},
				{at: 1100 * ms, script: rel, holder: "C", lease: 1000 * ms, want: integer(1), expect: retired(fairFamily)},
				// Nothing to take over: a heartbeat creates nothing.
				{at: 1200 * ms, script: hb, holder: "E", lease: 1000 * ms, want: integer(0), unchanged: true,
					expect: retired(fairFamily)},
				{at: 1200 * ms, script: acq, holder: "E", lease: 1000 * ms, want: granted(),
					expect: []keyWant{{holder: "E", ttl: 1000 * ms}}},
				{at: 1300 * ms, script: rel, holder: "E", lease: 1000 * ms, want: integer(1)},
			},
			wakes: []string{grantWake("B"), grantWake("C")},
		},
		{
			// A head handed the lock gives up before it heard (its release
			// replies 1) and nobody waits: the lock is retired, nothing is
			// left behind, and the next grant's fence is above it.
			name: "fair-grant-given-back", fam: fairFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 1000 * ms, want: granted()},
				{at: 100 * ms, script: acq, holder: "B", lease: 1000 * ms, want: busy(900)},
				{at: 200 * ms, script: rel, holder: "A", lease: 1000 * ms, want: handedTo("B"),
					expect: []keyWant{{holder: "B", ttl: 900 * ms, handed: true}}},
				{at: 300 * ms, script: rel, holder: "B", lease: 1000 * ms, want: integer(1), expect: retired(fairFamily)},
				{at: 400 * ms, script: rel, holder: "B", lease: 1000 * ms, want: integer(0), unchanged: true},
				{at: 400 * ms, script: ren, holder: "B", lease: 1000 * ms, want: integer(0), unchanged: true},
				{at: 500 * ms, script: acq, holder: "E", lease: 1000 * ms, want: granted()},
				{at: 600 * ms, script: rel, holder: "E", lease: 1000 * ms, want: integer(1)},
			},
			wakes: []string{grantWake("B")},
		},
		{
			// A newcomer finds the lock free (its holder's lease ran out)
			// with a live head: it may not take it; the head is handed the
			// lock and the newcomer queues, told to retry when the head's
			// hold would end.
			name: "fair-newcomer-hands-to-head", fam: fairFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 300 * ms, want: granted()},
				{at: 50 * ms, script: acq, holder: "B", lease: 1000 * ms, want: busy(250)},
				// B's place now lasts until 1200 ms.
				{at: 200 * ms, script: hb, holder: "B", lease: 1000 * ms, want: kept()},
				{at: 400 * ms, script: acq, holder: "C", lease: 1500 * ms, want: busy(800),
					expect: []keyWant{{holder: "B", ttl: 800 * ms, handed: true},
						{suffix: ":queue", members: []string{"C"}}, {suffix: ":alive", members: []string{"C"}, ttl: 1500 * ms}}},
				{at: 500 * ms, script: acq, holder: "B", lease: 1000 * ms, want: sameGrant(),
					expect: []keyWant{{holder: "B", ttl: 1000 * ms}}},
				// C's place ends at 1900 ms.
				{at: 600 * ms, script: rel, holder: "B", lease: 1000 * ms, want: handedTo("C"),
					expect: []keyWant{{holder: "C", ttl: 1300 * ms, handed: true}, {suffix: ":queue", absent: true}}},
				{at: 700 * ms, script: acq, holder: "C", lease: 1500 * ms, want: sameGrant(),
					expect: []keyWant{{holder: "C", ttl: 1500 * ms}}},
				{at: 800 * ms, script: rel, holder: "C", lease: 1500 * ms, want: integer(1),
					expect: []keyWant{{holder: tombstone}}},
			},
			wakes: []string{grantWake("B"), grantWake("C")},
		},
		{
			// A dead head (its place ran out) is skipped: the lock goes to
			// the next live waiter. When every waiter is dead, the release
			// frees the lock and publishes nothing.
			name: "fair-dead-head-skipped", fam: fairFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 2000 * ms, want: granted()},
				{at: 10 * ms, script: acq, holder: "B", lease: 300 * ms, want: busy(300)},
				{at: 20 * ms, script: acq, holder: "C", lease: 1000 * ms, want: busy(1000)},
				{at: 30 * ms, script: acq, holder: "D", lease: 1000 * ms, want: busy(1000)},
				// B's place ended at 310 ms.
				{at: 500 * ms, script: rel, holder: "A", lease: 2000 * ms, want: handedTo("C"),
					expect: []keyWant{{holder: "C", ttl: 520 * ms, handed: true},
						{suffix: ":queue", members: []string{"D"}}, {suffix: ":alive", members: []string{"D"}}}},
				{at: 600 * ms, script: rel, holder: "C", lease: 1000 * ms, want: handedTo("D"),
					expect: []keyWant{{holder: "D", ttl: 430 * ms, handed: true}, {suffix: ":queue", absent: true}}},
				{at: 700 * ms, script: rel, holder: "D", lease: 1000 * ms, want: integer(1),
					expect: []keyWant{{holder: tombstone}}},
				{at: 800 * ms, script: acq, holder: "E", lease: 1000 * ms, want: granted()},
				{at: 805 * ms, script: acq, holder: "G", lease: 500 * ms, want: busy(500)},
				{at: 810 * ms, script: acq, holder: "F", lease: 100 * ms, want: busy(100)},
				// G leaves, and the sets keep the TTL its place gave them
				// (1305 ms). F's place ended at 910 ms: the release pops
				// it, finds it dead, and frees the lock.
				{at: 850 * ms, script: rel, holder: "G", lease: 500 * ms, want: integer(0),
					expect: []keyWant{{suffix: ":queue", members: []string{"F"}}}},
				{at: 1000 * ms, script: rel, holder: "E", lease: 1000 * ms, want: integer(1),
					expect: []keyWant{{holder: tombstone}, {suffix: ":queue", absent: true}, {suffix: ":alive", absent: true}}},
			},
			wakes: []string{grantWake("C"), grantWake("D")},
		},
	}
}
