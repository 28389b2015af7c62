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
				{at: 1000 * ms, script: rel, holder: "A", lease: 2000 * ms, want: integer(0),
					expect: []keyWant{{absent: true}}},
				{at: 1000 * ms, script: acq, holder: "B", lease: 2000 * ms, want: granted()},
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
				{at: 300 * ms, script: rel, holder: "C", lease: 2000 * ms, want: integer(0),
					expect: []keyWant{{absent: true}}},
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
