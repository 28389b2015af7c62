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
					expect: []keyWant{{holder: "A", count: 1, ttl: 2000 * ms}}},
				{at: 300 * ms, script: acq, holder: "A", lease: 2000 * ms, want: reentered()},
				{at: 600 * ms, script: acq, holder: "A", lease: 2000 * ms, want: reentered(),
					expect: []keyWant{{holder: "A", count: 3, ttl: 2000 * ms}}},
				{at: 700 * ms, script: rel, holder: "A", lease: 2000 * ms, want: integer(2)},
				{at: 800 * ms, script: rel, holder: "A", lease: 2000 * ms, want: integer(1),
					// Still held, with the TTL the last re-entry gave it.
					expect: []keyWant{{holder: "A", count: 1, ttl: 1800 * ms}}},
				{at: 900 * ms, script: acq, holder: "B", lease: 2000 * ms, want: busy(1700)},
				// B waits, so the lock is reserved for it, not freed.
				{at: 1000 * ms, script: rel, holder: "A", lease: 2000 * ms, want: integer(0),
					expect: []keyWant{{holder: "!", count: 0, ttl: 10 * ms}}},
				{at: 1000 * ms, script: acq, holder: "B", lease: 2000 * ms, extra: []string{"waited"}, want: granted()},
			},
			// B got busy while A held the lock: A's last release wakes one waiter.
			wakes: []string{"n:1"},
		},
		{
			// Three waiters, one wake per release: C never retries while B
			// holds the lock, so B's grant must stay marked contended (B
			// says it waited) or B's release would wake nobody and C would
			// sleep out its timer.
			name: "mutex-waiter-chain", fam: mutexFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 2000 * ms, want: granted()},
				{at: 10 * ms, script: acq, holder: "B", lease: 2000 * ms, want: busy(1990)},
				{at: 20 * ms, script: acq, holder: "C", lease: 2000 * ms, want: busy(1980)},
				{at: 100 * ms, script: rel, holder: "A", lease: 2000 * ms, want: integer(0)},
				{at: 110 * ms, script: acq, holder: "B", lease: 2000 * ms, extra: []string{"waited"}, want: granted()},
				{at: 200 * ms, script: rel, holder: "B", lease: 2000 * ms, want: integer(0)},
				{at: 210 * ms, script: acq, holder: "C", lease: 2000 * ms, extra: []string{"waited"}, want: granted()},
				// C's grant is marked, so its release reserves the lock
				// for a waiter that is not there; the reservation lapses.
				{at: 300 * ms, script: rel, holder: "C", lease: 2000 * ms, want: integer(0),
					expect: []keyWant{{holder: "!", count: 0, ttl: 10 * ms}}},
				// A caller that never waited leaves no mark: its release is silent.
				{at: 400 * ms, script: acq, holder: "D", lease: 2000 * ms, want: granted()},
				{at: 500 * ms, script: rel, holder: "D", lease: 2000 * ms, want: integer(0)},
			},
			// C's last wake finds nobody: one spurious message once contention ends.
			wakes: []string{"n:1", "n:1", "n:1"},
		},
		{
			name: "mutex-expiry", fam: mutexFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 2000 * ms, want: granted()},
				{at: 100 * ms, script: acq, holder: "B", lease: 2000 * ms, want: busy(1900)},
				{at: 2100 * ms, script: acq, holder: "B", lease: 2000 * ms, want: granted()},
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
			// marking the lock: the release then publishes nothing and leaves
			// no reservation, so the next try-once caller gets the lock at once.
			name: "mutex-try-once", fam: mutexFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 2000 * ms, want: granted()},
				{at: 10 * ms, script: acq, holder: "B", lease: 2000 * ms, extra: []string{"once"}, want: busy(1990), unchanged: true},
				{at: 10 * ms, script: acq, holder: "C", lease: 2000 * ms, extra: []string{"once"}, want: busy(1990),
					expect: []keyWant{{holder: "A", count: 1, ttl: 1990 * ms}}},
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

// reservationScenarios: a contended release reserves the mutex for the
// callers that waited, so the waiter it wakes is not overtaken by the
// releaser or a newcomer in the round trip it needs to arrive.
func reservationScenarios() []*scenario {
	acq, rel := lua.MutexAcquire, lua.MutexRelease
	waited := []string{"waited"}
	return []*scenario{
		{
			// The reservation lives 10 ms: the steps that must meet it run
			// at the offset of the release, back to back, so that the real
			// server's run is not late for it.
			name: "mutex-reservation", fam: mutexFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 2000 * ms, want: granted()},
				{at: 10 * ms, script: acq, holder: "B", lease: 2000 * ms, want: busy(1990)},
				{at: 100 * ms, script: rel, holder: "A", lease: 2000 * ms, want: integer(0),
					expect: []keyWant{{holder: "!", count: 0, ttl: 10 * ms}}},
				// A newcomer and the releaser itself are refused until the
				// reservation ends, and change nothing.
				{at: 100 * ms, script: acq, holder: "C", lease: 2000 * ms, want: busy(10), unchanged: true},
				{at: 100 * ms, script: acq, holder: "A", lease: 2000 * ms, want: busy(10), unchanged: true},
				// The woken waiter is admitted, with a higher fence, and its
				// grant stays marked contended.
				{at: 100 * ms, script: acq, holder: "B", lease: 2000 * ms, extra: waited, want: granted(),
					expect: []keyWant{{holder: "B", count: 1, ttl: 2000 * ms}}},
				{at: 200 * ms, script: rel, holder: "B", lease: 2000 * ms, want: integer(0),
					expect: []keyWant{{holder: "!", count: 0, ttl: 10 * ms}}},
				// Nobody came for it: after its 10 ms a newcomer gets the
				// lock, fence still above every earlier one.
				{at: 300 * ms, script: acq, holder: "C", lease: 2000 * ms, want: granted()},
				{at: 400 * ms, script: rel, holder: "C", lease: 2000 * ms, want: integer(0),
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
				{at: 50 * ms, script: acq, holder: "B", lease: 100 * ms, want: busy(100)},
				{at: 20 * ms, script: rel, holder: "A", lease: 100 * ms, want: integer(0),
					expect: []keyWant{{holder: "!", count: 0, ttl: 31 * ms}}},
				{at: 20 * ms, script: acq, holder: "C", lease: 100 * ms, want: busy(31)},
				{at: 20 * ms, script: acq, holder: "B", lease: 100 * ms, extra: waited, want: granted()},
				{at: 60 * ms, script: rel, holder: "B", lease: 100 * ms, want: integer(0),
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
