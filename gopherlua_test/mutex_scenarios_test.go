package gopherlua_test

import (
	"time"

	"github.com/lockgen/lockgen/lua"
)

const ms = time.Millisecond

func mutexScenarios() []*scenario {
	acq, ren, rel := lua.MutexAcquire, lua.MutexRenew, lua.MutexRelease
	return []*scenario{
		{
			name: "mutex-reentrant", fam: mutexFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 2000 * ms, want: granted(),
					expect: []keyWant{{holder: "A", count: 1, ttl: 2000 * ms, waited: "0", noHeir: true}}},
				{at: 300 * ms, script: acq, holder: "A", lease: 2000 * ms, want: reentered()},
				{at: 600 * ms, script: acq, holder: "A", lease: 2000 * ms, want: reentered(),
					expect: []keyWant{{holder: "A", count: 3, ttl: 2000 * ms}}},
				// B gets busy and becomes the heir: the releases that are
				// not the last keep it.
				{at: 650 * ms, script: acq, holder: "B", lease: 2000 * ms, want: heirBusy(1950),
					expect: []keyWant{{holder: "A", count: 3, ttl: 1950 * ms, heir: "B", heirUntil: 2650 * ms}}},
				{at: 700 * ms, script: rel, holder: "A", lease: 2000 * ms, want: integer(2),
					expect: []keyWant{{holder: "A", count: 2, heir: "B", heirUntil: 2650 * ms}}},
				{at: 800 * ms, script: rel, holder: "A", lease: 2000 * ms, want: integer(1),
					// Still held, with the TTL the last re-entry gave it.
					expect: []keyWant{{holder: "A", count: 1, ttl: 1800 * ms, heir: "B", heirUntil: 2650 * ms}}},
				// The last release hands the lock to B for what is left
				// of its registration.
				{at: 1000 * ms, script: rel, holder: "A", lease: 2000 * ms, want: integer(0),
					expect: []keyWant{{holder: "B", count: 1, ttl: 1650 * ms, handed: true, waited: "1"}}},
				{at: 1100 * ms, script: rel, holder: "A", lease: 2000 * ms, want: integer(-1), unchanged: true},
				// B's grant stays marked contended: its release, with
				// nobody left, reserves the lock and wakes one waiter.
				{at: 1200 * ms, script: rel, holder: "B", lease: 2000 * ms, want: integer(0),
					expect: []keyWant{{holder: "!", count: 0, ttl: 10 * ms}}},
			},
			wakes: []string{grantWake("B"), "n:1"},
		},
		{
			// Three waiters. B becomes the heir and is handed the lock; C
			// got busy behind the live heir and never retries while B
			// holds the lock (nothing nudged it), so B's grant must stay
			// marked contended or B's release would wake nobody and C
			// would sleep out its timer.
			name: "mutex-waiter-chain", fam: mutexFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 2000 * ms, want: granted()},
				{at: 10 * ms, script: acq, holder: "B", lease: 2000 * ms, want: heirBusy(1990)},
				{at: 20 * ms, script: acq, holder: "C", lease: 2000 * ms, want: busy(1980), unchanged: true},
				{at: 100 * ms, script: rel, holder: "A", lease: 2000 * ms, want: integer(0),
					expect: []keyWant{{holder: "B", count: 1, ttl: 1910 * ms, handed: true, waited: "1"}}},
				{at: 200 * ms, script: rel, holder: "B", lease: 2000 * ms, want: integer(0),
					expect: []keyWant{{holder: "!", count: 0, ttl: 10 * ms}}},
				{at: 210 * ms, script: acq, holder: "C", lease: 2000 * ms, extra: []string{"waited"}, want: granted(),
					expect: []keyWant{{holder: "C", count: 1, waited: "1", noHeir: true}}},
				// C's grant is marked, so its release reserves the lock
				// for a waiter that is not there; the reservation lapses.
				{at: 300 * ms, script: rel, holder: "C", lease: 2000 * ms, want: integer(0),
					expect: []keyWant{{holder: "!", count: 0, ttl: 10 * ms}}},
				// A caller that never waited leaves no mark: its release is silent.
				{at: 400 * ms, script: acq, holder: "D", lease: 2000 * ms, want: granted(),
					expect: []keyWant{{holder: "D", count: 1, waited: "0"}}},
				{at: 500 * ms, script: rel, holder: "D", lease: 2000 * ms, want: integer(0),
					expect: []keyWant{{absent: true}}},
			},
			// C's last wake finds nobody: one spurious message once contention ends.
			wakes: []string{grantWake("B"), "n:1", "n:1"},
		},
		{
			name: "mutex-expiry", fam: mutexFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 2000 * ms, want: granted()},
				{at: 100 * ms, script: acq, holder: "B", lease: 2000 * ms, want: heirBusy(1900)},
				// The heir fields went with A's key: B's attempt finds the
				// lock free and takes it, with no heir and no mark.
				{at: 2100 * ms, script: acq, holder: "B", lease: 2000 * ms, want: granted(),
					expect: []keyWant{{holder: "B", count: 1, ttl: 2000 * ms, waited: "0", noHeir: true}}},
				{at: 2200 * ms, script: ren, holder: "A", lease: 2000 * ms, want: integer(0), unchanged: true},
				{at: 2200 * ms, script: rel, holder: "A", lease: 2000 * ms, want: integer(-1), unchanged: true},
				{at: 2300 * ms, script: ren, holder: "B", lease: 2000 * ms, want: integer(1),
					expect: []keyWant{{holder: "B", count: 1, ttl: 2000 * ms}}},
				{at: 2400 * ms, script: rel, holder: "B", lease: 2000 * ms, want: integer(0),
					expect: []keyWant{{absent: true}}},
			},
			// A's lease ran out, so nobody released while B waited; B's own
			// hold saw no contention.
			wakes: nil,
		},
		{
			// Callers that try once (wait=0, onbusy=skip) are refused without
			// marking the lock or becoming its heir: the release then
			// publishes nothing, hands nothing over and leaves no
			// reservation, so the next try-once caller gets the lock at once.
			name: "mutex-try-once", fam: mutexFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 2000 * ms, want: granted()},
				{at: 10 * ms, script: acq, holder: "B", lease: 2000 * ms, extra: []string{"once"}, want: busy(1990), unchanged: true},
				{at: 10 * ms, script: acq, holder: "C", lease: 2000 * ms, extra: []string{"once"}, want: busy(1990),
					expect: []keyWant{{holder: "A", count: 1, ttl: 1990 * ms, waited: "0", noHeir: true}}},
				{at: 100 * ms, script: rel, holder: "A", lease: 2000 * ms, want: integer(0),
					expect: []keyWant{{absent: true}}},
				{at: 100 * ms, script: acq, holder: "B", lease: 2000 * ms, extra: []string{"once"}, want: granted()},
				{at: 200 * ms, script: rel, holder: "B", lease: 2000 * ms, want: integer(0)},
			},
			wakes: nil,
		},
		{
			name: "mutex-owner", fam: mutexFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 1000 * ms, want: granted()},
				{at: 10 * ms, script: ren, holder: "B", lease: 5000 * ms, want: integer(0), unchanged: true},
				{at: 20 * ms, script: rel, holder: "B", lease: 1000 * ms, want: integer(-1), unchanged: true},
				{at: 30 * ms, script: ren, holder: "A", lease: 3000 * ms, want: integer(1),
					expect: []keyWant{{holder: "A", count: 1, ttl: 3000 * ms}}},
				{at: 40 * ms, script: rel, holder: "A", lease: 1000 * ms, want: integer(0)},
				{at: 50 * ms, script: rel, holder: "A", lease: 1000 * ms, want: integer(-1)},
				{at: 60 * ms, script: ren, holder: "A", lease: 1000 * ms, want: integer(0)},
			},
		},
	}
}

// reservationScenarios: the last release of a contended mutex that has no
// live heir (it gave up, or its registration ran out) reserves the lock
// for the callers that waited, so the waiter it wakes is not overtaken by
// the releaser or a newcomer in the round trip it needs to arrive.
func reservationScenarios() []*scenario {
	acq, rel, leave := lua.MutexAcquire, lua.MutexRelease, lua.MutexLeave
	waited := []string{"waited"}
	return []*scenario{
		{
			// The reservation lives 10 ms: the steps that must meet it run
			// at the offset of the release, back to back, so that the real
			// server's run is not late for it.
			name: "mutex-reservation", fam: mutexFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 2000 * ms, want: granted()},
				{at: 10 * ms, script: acq, holder: "B", lease: 2000 * ms, want: heirBusy(1990)},
				{at: 20 * ms, script: acq, holder: "C", lease: 2000 * ms, want: busy(1980), unchanged: true},
				// The heir gives up; the lock stays marked for C.
				{at: 50 * ms, script: leave, holder: "B", lease: 2000 * ms, want: integer(1),
					expect: []keyWant{{holder: "A", count: 1, ttl: 1950 * ms, waited: "1", noHeir: true}}},
				{at: 100 * ms, script: rel, holder: "A", lease: 2000 * ms, want: integer(0),
					expect: []keyWant{{holder: "!", count: 0, ttl: 10 * ms, waited: "1"}}},
				// A newcomer and the releaser itself are refused until the
				// reservation ends, and change nothing.
				{at: 100 * ms, script: acq, holder: "D", lease: 2000 * ms, want: busy(10), unchanged: true},
				{at: 100 * ms, script: acq, holder: "A", lease: 2000 * ms, want: busy(10), unchanged: true},
				// The woken waiter is admitted, with a higher fence, and its
				// grant stays marked contended.
				{at: 100 * ms, script: acq, holder: "C", lease: 2000 * ms, extra: waited, want: granted(),
					expect: []keyWant{{holder: "C", count: 1, ttl: 2000 * ms, waited: "1", noHeir: true}}},
				{at: 200 * ms, script: rel, holder: "C", lease: 2000 * ms, want: integer(0),
					expect: []keyWant{{holder: "!", count: 0, ttl: 10 * ms}}},
				// Nobody came for it: after its 10 ms a newcomer gets the
				// lock, fence still above every earlier one.
				{at: 300 * ms, script: acq, holder: "D", lease: 2000 * ms, want: granted()},
				{at: 400 * ms, script: rel, holder: "D", lease: 2000 * ms, want: integer(0),
					expect: []keyWant{{absent: true}}},
			},
			wakes: []string{"n:1", "n:1"},
		},
		{
			// A lease shorter than 10 ms caps the reservation; a fence ahead
			// of the clock (the server's clock stepped back 30 ms) stretches
			// it until the clock has passed the fence.
			name: "mutex-reservation-bounds", fam: mutexFamily, shimOnly: true,
			steps: []step{
				{at: 50 * ms, script: acq, holder: "A", lease: 100 * ms, want: granted()},
				{at: 50 * ms, script: acq, holder: "B", lease: 100 * ms, want: heirBusy(100)},
				{at: 50 * ms, script: acq, holder: "E", lease: 100 * ms, want: busy(100)},
				{at: 50 * ms, script: leave, holder: "B", lease: 100 * ms, want: integer(1)},
				{at: 20 * ms, script: rel, holder: "A", lease: 100 * ms, want: integer(0),
					expect: []keyWant{{holder: "!", count: 0, ttl: 31 * ms}}},
				{at: 20 * ms, script: acq, holder: "C", lease: 100 * ms, want: busy(31)},
				{at: 20 * ms, script: acq, holder: "E", lease: 100 * ms, extra: waited, want: granted()},
				{at: 60 * ms, script: rel, holder: "E", lease: 100 * ms, want: integer(0),
					expect: []keyWant{{holder: "!", count: 0, ttl: 10 * ms}}},
				{at: 60 * ms, script: acq, holder: "C", lease: 5 * ms, extra: waited, want: granted()},
				{at: 62 * ms, script: rel, holder: "C", lease: 5 * ms, want: integer(0),
					expect: []keyWant{{holder: "!", count: 0, ttl: 5 * ms}}},
				{at: 66 * ms, script: acq, holder: "D", lease: 100 * ms, want: busy(1)},
				{at: 68 * ms, script: acq, holder: "D", lease: 100 * ms, want: granted()},
			},
			wakes: []string{"n:1", "n:1", "n:1"},
		},
	}
}
