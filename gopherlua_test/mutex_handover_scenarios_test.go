package gopherlua_test

import "github.com/lockgen/lockgen/lua"

// mutexHandOverScenarios: the first caller that gets busy on a held mutex
// becomes its heir ({2, wait_ms}; B becomes "<holder> <count> <fence> 1
// <heir> <until>", until one of the heir's leases after its attempt, TTL
// kept), and the last release hands the lock to a live heir: B becomes
// "<heir> 1 <new fence> 1" for until - now, and "grant:<fence>:<heir>" is
// published. Anyone else is busy ({0, wait_ms}) while the heir lives and
// takes its place once it has not. An heir that missed the message claims
// the grant with its next attempt ("retry" or "waited"); one that gives up
// calls mutex_leave.
func mutexHandOverScenarios() []*scenario {
	acq, ren, rel, leave := lua.MutexAcquire, lua.MutexRenew, lua.MutexRelease, lua.MutexLeave
	once, retry, waited := []string{"once"}, []string{"retry"}, []string{"waited"}
	return []*scenario{
		{
			// The first busy caller becomes the heir; a second one does
			// not replace it; each attempt of the heir, whatever it says,
			// pushes its registration a lease on. The owner's renew keeps
			// the heir. The release hands the lock over for what is left
			// of the heir's registration, and the new holder's lock gets
			// an heir of its own.
			name: "mutex-heir-first-busy", fam: mutexFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 2000 * ms, want: granted(),
					expect: []keyWant{{holder: "A", count: 1, ttl: 2000 * ms, waited: "0", noHeir: true}}},
				{at: 100 * ms, script: acq, holder: "B", lease: 1000 * ms, want: heirBusy(1000),
					expect: []keyWant{{holder: "A", count: 1, ttl: 1900 * ms, waited: "1", heir: "B", heirUntil: 1100 * ms}}},
				{at: 200 * ms, script: acq, holder: "C", lease: 1500 * ms, want: busy(1500), unchanged: true},
				{at: 200 * ms, script: acq, holder: "C", lease: 1500 * ms, extra: waited, want: busy(1500), unchanged: true},
				{at: 300 * ms, script: acq, holder: "B", lease: 1000 * ms, extra: retry, want: heirBusy(1000),
					expect: []keyWant{{holder: "A", count: 1, ttl: 1700 * ms, heir: "B", heirUntil: 1300 * ms}}},
				{at: 400 * ms, script: acq, holder: "B", lease: 1000 * ms, extra: waited, want: heirBusy(1000),
					expect: []keyWant{{holder: "A", count: 1, ttl: 1600 * ms, heir: "B", heirUntil: 1400 * ms}}},
				{at: 450 * ms, script: ren, holder: "A", lease: 2000 * ms, want: integer(1),
					expect: []keyWant{{holder: "A", count: 1, ttl: 2000 * ms, heir: "B", heirUntil: 1400 * ms}}},
				// The heir holds nothing yet.
				{at: 450 * ms, script: ren, holder: "B", lease: 1000 * ms, want: integer(0), unchanged: true},
				{at: 450 * ms, script: rel, holder: "B", lease: 1000 * ms, want: integer(-1), unchanged: true},
				{at: 500 * ms, script: rel, holder: "A", lease: 2000 * ms, want: integer(0),
					expect: []keyWant{{holder: "B", count: 1, ttl: 900 * ms, handed: true, waited: "1"}}},
				// C, nudged by the grant, becomes the heir of B's grant.
				{at: 600 * ms, script: acq, holder: "C", lease: 1500 * ms, extra: retry, want: heirBusy(800),
					expect: []keyWant{{holder: "B", count: 1, ttl: 800 * ms, heir: "C", heirUntil: 2100 * ms}}},
				{at: 700 * ms, script: rel, holder: "B", lease: 1000 * ms, want: integer(0),
					expect: []keyWant{{holder: "C", count: 1, ttl: 1400 * ms, handed: true, waited: "1"}}},
				// Nobody left: C's release reserves the lock and wakes one
				// waiter, as for any marked lock without a live heir.
				{at: 800 * ms, script: rel, holder: "C", lease: 1500 * ms, want: integer(0),
					expect: []keyWant{{holder: "!", count: 0, ttl: 10 * ms, waited: "1"}}},
			},
			wakes: []string{grantWake("B"), grantWake("C"), "n:1"},
		},
		{
			// An heir whose registration ran out (it died, or stopped
			// retrying) is replaced by the next busy caller, a first
			// attempt included; the old heir cannot take it back while the
			// new one lives. A release that finds only a dead heir falls
			// back to the reservation and "n:1".
			name: "mutex-dead-heir", fam: mutexFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 5000 * ms, want: granted()},
				{at: 100 * ms, script: acq, holder: "B", lease: 300 * ms, want: heirBusy(300),
					expect: []keyWant{{holder: "A", count: 1, heir: "B", heirUntil: 400 * ms}}},
				{at: 200 * ms, script: acq, holder: "C", lease: 1000 * ms, want: busy(1000), unchanged: true},
				// B's registration ended at 400 ms.
				{at: 700 * ms, script: acq, holder: "D", lease: 1000 * ms, want: heirBusy(1000),
					expect: []keyWant{{holder: "A", count: 1, ttl: 4300 * ms, heir: "D", heirUntil: 1700 * ms}}},
				{at: 800 * ms, script: acq, holder: "B", lease: 300 * ms, extra: retry, want: busy(300), unchanged: true},
				{at: 800 * ms, script: acq, holder: "C", lease: 1000 * ms, extra: waited, want: busy(1000), unchanged: true},
				// D's ended at 1700 ms.
				{at: 2200 * ms, script: rel, holder: "A", lease: 5000 * ms, want: integer(0),
					expect: []keyWant{{holder: "!", count: 0, ttl: 10 * ms, waited: "1"}}},
				{at: 2300 * ms, script: acq, holder: "E", lease: 1000 * ms, want: granted(),
					expect: []keyWant{{holder: "E", count: 1, waited: "0", noHeir: true}}},
				{at: 2400 * ms, script: rel, holder: "E", lease: 1000 * ms, want: integer(0),
					expect: []keyWant{{absent: true}}},
			},
			wakes: []string{"n:1"},
		},
		{
			// The grant message is lost. The heir's next attempt, "retry"
			// (right after subscribing) or "waited" (after its timer),
			// claims the grant: same fence, still one hold, lease
			// restarted, heir fields kept. Without ARGV[4] the same call
			// is a re-entry; the release of that extra hold keeps the
			// heir, and the last one hands over to it.
			name: "mutex-claim-lost-grant", fam: mutexFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 1000 * ms, want: granted()},
				{at: 100 * ms, script: acq, holder: "B", lease: 1000 * ms, want: heirBusy(900)},
				{at: 200 * ms, script: rel, holder: "A", lease: 1000 * ms, want: integer(0),
					expect: []keyWant{{holder: "B", count: 1, ttl: 900 * ms, handed: true}}},
				{at: 300 * ms, script: acq, holder: "B", lease: 1000 * ms, extra: retry, want: claimed(),
					expect: []keyWant{{holder: "B", count: 1, ttl: 1000 * ms, waited: "1", noHeir: true}}},
				{at: 400 * ms, script: acq, holder: "C", lease: 1000 * ms, want: heirBusy(900),
					expect: []keyWant{{holder: "B", count: 1, ttl: 900 * ms, heir: "C", heirUntil: 1400 * ms}}},
				{at: 500 * ms, script: acq, holder: "B", lease: 1000 * ms, extra: waited, want: claimed(),
					expect: []keyWant{{holder: "B", count: 1, ttl: 1000 * ms, heir: "C", heirUntil: 1400 * ms}}},
				{at: 600 * ms, script: acq, holder: "B", lease: 1000 * ms, want: reentered(),
					expect: []keyWant{{holder: "B", count: 2, ttl: 1000 * ms, heir: "C", heirUntil: 1400 * ms}}},
				{at: 700 * ms, script: rel, holder: "B", lease: 1000 * ms, want: integer(1),
					expect: []keyWant{{holder: "B", count: 1, ttl: 900 * ms, heir: "C", heirUntil: 1400 * ms}}},
				{at: 800 * ms, script: rel, holder: "B", lease: 1000 * ms, want: integer(0),
					expect: []keyWant{{holder: "C", count: 1, ttl: 600 * ms, handed: true}}},
				{at: 900 * ms, script: acq, holder: "C", lease: 1000 * ms, extra: waited, want: claimed(),
					expect: []keyWant{{holder: "C", count: 1, ttl: 1000 * ms}}},
				{at: 1000 * ms, script: rel, holder: "C", lease: 1000 * ms, want: integer(0),
					expect: []keyWant{{holder: "!", count: 0, ttl: 10 * ms}}},
			},
			wakes: []string{grantWake("B"), grantWake("C"), "n:1"},
		},
		{
			// mutex_leave by the heir drops the heir fields (1), TTL and
			// mark kept, so the release still wakes a waiter; by anyone
			// else it changes nothing (0).
			name: "mutex-heir-leaves", fam: mutexFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 2000 * ms, want: granted()},
				{at: 100 * ms, script: leave, holder: "X", lease: 1000 * ms, want: integer(0), unchanged: true},
				{at: 100 * ms, script: acq, holder: "B", lease: 1000 * ms, want: heirBusy(1000)},
				{at: 200 * ms, script: leave, holder: "C", lease: 1000 * ms, want: integer(0), unchanged: true},
				{at: 300 * ms, script: leave, holder: "B", lease: 1000 * ms, want: integer(1),
					expect: []keyWant{{holder: "A", count: 1, ttl: 1700 * ms, waited: "1", noHeir: true}}},
				{at: 400 * ms, script: leave, holder: "B", lease: 1000 * ms, want: integer(0), unchanged: true},
				{at: 500 * ms, script: rel, holder: "A", lease: 2000 * ms, want: integer(0),
					expect: []keyWant{{holder: "!", count: 0, ttl: 10 * ms, waited: "1"}}},
				{at: 600 * ms, script: leave, holder: "X", lease: 1000 * ms, want: integer(0),
					expect: []keyWant{{absent: true}}},
			},
			wakes: []string{"n:1"},
		},
		{
			// A handed heir gives up before it heard (mutex_leave replies
			// 2): the lock goes on to the newer live heir at once; given
			// back again with no heir, it is reserved and "n:1" wakes a
			// waiter (the grant was marked).
			name: "mutex-grant-given-back", fam: mutexFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 1000 * ms, want: granted()},
				{at: 100 * ms, script: acq, holder: "B", lease: 1000 * ms, want: heirBusy(900)},
				{at: 200 * ms, script: rel, holder: "A", lease: 1000 * ms, want: integer(0),
					expect: []keyWant{{holder: "B", count: 1, ttl: 900 * ms, handed: true}}},
				{at: 300 * ms, script: acq, holder: "C", lease: 1000 * ms, want: heirBusy(800),
					expect: []keyWant{{holder: "B", count: 1, heir: "C", heirUntil: 1300 * ms}}},
				{at: 400 * ms, script: leave, holder: "B", lease: 1000 * ms, want: integer(2),
					expect: []keyWant{{holder: "C", count: 1, ttl: 900 * ms, handed: true, waited: "1"}}},
				{at: 500 * ms, script: leave, holder: "B", lease: 1000 * ms, want: integer(0), unchanged: true},
				{at: 500 * ms, script: ren, holder: "B", lease: 1000 * ms, want: integer(0), unchanged: true},
				{at: 600 * ms, script: leave, holder: "C", lease: 1000 * ms, want: integer(2),
					expect: []keyWant{{holder: "!", count: 0, ttl: 10 * ms, waited: "1"}}},
				{at: 700 * ms, script: acq, holder: "D", lease: 1000 * ms, want: granted(),
					expect: []keyWant{{holder: "D", count: 1, waited: "0", noHeir: true}}},
				{at: 800 * ms, script: rel, holder: "D", lease: 1000 * ms, want: integer(0),
					expect: []keyWant{{absent: true}}},
			},
			wakes: []string{grantWake("B"), grantWake("C"), "n:1"},
		},
		{
			// A caller that tries once never becomes the heir, not even in
			// place of a dead one, and marks nothing. Only "waited" takes
			// a reservation; "retry" (an attempt right after subscribing,
			// not one a wake-up prompted) waits it out like a newcomer.
			name: "mutex-once-retry-reservation", fam: mutexFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 2000 * ms, want: granted()},
				{at: 100 * ms, script: acq, holder: "B", lease: 1000 * ms, extra: once, want: busy(1000), unchanged: true},
				{at: 100 * ms, script: acq, holder: "C", lease: 300 * ms, want: heirBusy(300)},
				{at: 200 * ms, script: acq, holder: "B", lease: 1000 * ms, extra: once, want: busy(1000), unchanged: true},
				// C's registration ended at 400 ms.
				{at: 800 * ms, script: acq, holder: "B", lease: 1000 * ms, extra: once, want: busy(1000), unchanged: true},
				{at: 900 * ms, script: rel, holder: "A", lease: 2000 * ms, want: integer(0),
					expect: []keyWant{{holder: "!", count: 0, ttl: 10 * ms, waited: "1"}}},
				{at: 900 * ms, script: acq, holder: "B", lease: 1000 * ms, extra: waited, want: granted(),
					expect: []keyWant{{holder: "B", count: 1, ttl: 1000 * ms, waited: "1", noHeir: true}}},
				{at: 1000 * ms, script: rel, holder: "B", lease: 1000 * ms, want: integer(0)},
				// A reservation that lasts (as one does while the fence
				// tombstone must), so that the real server is in time.
				{at: 1100 * ms, raw: []string{"SET", "lockgen:mutex:{mutex-once-retry-reservation}", "! 0 1 1", "PX", "1000"}, want: isOK()},
				{at: 1100 * ms, script: acq, holder: "D", lease: 2000 * ms, extra: once, want: busy(1000), unchanged: true},
				{at: 1100 * ms, script: acq, holder: "D", lease: 2000 * ms, extra: retry, want: busy(1000), unchanged: true},
				{at: 1100 * ms, script: acq, holder: "D", lease: 2000 * ms, want: busy(1000), unchanged: true},
				{at: 1100 * ms, script: acq, holder: "D", lease: 2000 * ms, extra: waited, want: granted(),
					expect: []keyWant{{holder: "D", count: 1, ttl: 2000 * ms, waited: "1", noHeir: true}}},
				{at: 1200 * ms, script: rel, holder: "D", lease: 2000 * ms, want: integer(0),
					expect: []keyWant{{holder: "!", count: 0, ttl: 10 * ms}}},
			},
			wakes: []string{"n:1", "n:1", "n:1"},
		},
	}
}
