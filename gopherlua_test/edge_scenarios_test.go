package gopherlua_test

import "github.com/lockgen/lockgen/lua"

// edgeScenarios: damaged keys, wake-ups from scripts called by bystanders,
// and (in the shim only, where two calls can share a microsecond and the
// clock can step back) the fence tombstones and a lease in its very last
// millisecond.
func edgeScenarios() []*scenario {
	facq, fren, frel, fhb := lua.FairAcquire, lua.FairRenew, lua.FairRelease, lua.FairHeartbeat
	macq, mren, mrel := lua.MutexAcquire, lua.MutexRenew, lua.MutexRelease
	return []*scenario{
		{
			// A queue member with no liveness entry (keys damaged by hand,
			// Redisson #4153) is dropped instead of blocking or erroring.
			name: "fair-damaged", fam: fairFamily,
			steps: []step{
				{at: 0, script: facq, holder: "A", lease: 1000 * ms, want: granted()},
				{at: 5 * ms, raw: []string{"ZADD", "lockgen:fair:{fair-damaged}:queue", "1", "ghost"}, want: integer(1)},
				{at: 10 * ms, script: facq, holder: "B", lease: 1000 * ms, want: busy(990),
					expect: []keyWant{{suffix: ":queue", members: []string{"ghost", "B"}}}},
				// The release skips the ghost and hands the lock to B.
				{at: 20 * ms, script: frel, holder: "A", lease: 1000 * ms, want: handedTo("B"),
					expect: handedLast("B", 990*ms)},
				{at: 30 * ms, script: facq, holder: "B", lease: 1000 * ms, want: sameGrant()},
				{at: 40 * ms, script: frel, holder: "B", lease: 1000 * ms, want: integer(1), expect: retired(fairFamily)},
				// A newcomer that finds the lock free skips a ghost at the head too.
				{at: 50 * ms, raw: []string{"ZADD", "lockgen:fair:{fair-damaged}:queue", "1", "ghost"}, want: integer(1)},
				{at: 60 * ms, script: facq, holder: "C", lease: 1000 * ms, want: granted(),
					expect: []keyWant{{suffix: ":queue", absent: true}}},
				{at: 70 * ms, script: frel, holder: "C", lease: 1000 * ms, want: integer(1), expect: retired(fairFamily)},
			},
			wakes: []string{grantWake("B")},
		},
		{
			// Any fair script, even from a caller that holds nothing,
			// evicts the dead and hands a free lock to the first live
			// waiter.
			name: "fair-bystander-wakes", fam: fairFamily,
			steps: []step{
				{at: 0, script: facq, holder: "A", lease: 2000 * ms, want: granted()},
				{at: 10 * ms, script: facq, holder: "B", lease: 300 * ms, want: busy(300)},
				{at: 20 * ms, script: facq, holder: "C", lease: 2000 * ms, want: busy(1980)},
				// B is handed the lock until its place ends (310 ms).
				{at: 100 * ms, script: frel, holder: "A", lease: 2000 * ms, want: handedTo("B"),
					expect: []keyWant{{holder: "B", ttl: 210 * ms, handed: true}, {suffix: ":queue", members: []string{"C"}}}},
				// B never comes; a renew by someone else finds the lock free.
				{at: 500 * ms, script: fren, holder: "X", lease: 2000 * ms, want: integer(0),
					expect: []keyWant{{holder: "C", ttl: 1520 * ms, handed: true}, {suffix: ":queue", absent: true}}},
				{at: 600 * ms, script: facq, holder: "D", lease: 2000 * ms, want: busy(1420)},
				// C never comes either (its place, and so its hold, ends at
				// 2020 ms); a stray release finds the lock free.
				{at: 2100 * ms, script: frel, holder: "Y", lease: 2000 * ms, want: integer(0),
					expect: []keyWant{{holder: "D", ttl: 500 * ms, handed: true}, {suffix: ":queue", absent: true}}},
				{at: 2200 * ms, script: facq, holder: "D", lease: 2000 * ms, want: sameGrant()},
				{at: 2300 * ms, script: frel, holder: "D", lease: 2000 * ms, want: integer(1)},
				// A heartbeat from someone not queued does it too.
				{at: 2400 * ms, script: facq, holder: "E", lease: 200 * ms, want: granted()},
				{at: 2410 * ms, script: facq, holder: "F", lease: 1000 * ms, want: busy(190)},
				{at: 2700 * ms, script: fhb, holder: "Z", lease: 1000 * ms, want: integer(0),
					expect: []keyWant{{holder: "F", ttl: 710 * ms, handed: true}, {suffix: ":queue", absent: true}}},
				{at: 2800 * ms, script: frel, holder: "F", lease: 1000 * ms, want: integer(1), expect: retired(fairFamily)},
			},
			wakes: []string{grantWake("B"), grantWake("C"), grantWake("D"), grantWake("F")},
		},
		{
			// On Cluster the runtime passes SPUBLISH; offers and claims
			// then travel as sharded messages on the lock's slot.
			name: "mutex-sharded-wake", fam: mutexFamily, sharded: true,
			steps: []step{
				{at: 0, script: macq, holder: "A", lease: 1000 * ms, extra: registers, want: granted()},
				{at: 10 * ms, script: macq, holder: "B", lease: 1000 * ms, extra: registers, want: busy(990)},
				{at: 20 * ms, script: mrel, holder: "A", lease: 1000 * ms, want: handedTo("B"),
					expect: []keyWant{{holder: "B", waiters: "1", ttl: offer, handed: true}}},
				{at: 30 * ms, script: macq, holder: "B", lease: 1000 * ms, extra: registers, want: sameGrant()},
				{at: 40 * ms, script: mrel, holder: "B", lease: 1000 * ms, want: integer(1), expect: retired(mutexFamily)},
			},
			wakes: []string{grantWake("B"), takenWake("B"), "all"},
		},
		{
			name: "tomb-mutex", fam: mutexFamily, shimOnly: true,
			steps: []step{
				{at: 0, script: macq, holder: "A", lease: 100 * ms, extra: registers, want: granted()},
				// Released in the microsecond of the grant: a tombstone keeps
				// the fence for the rest of the lease and the floor, and the
				// next grant counts on from it.
				{at: 0, script: mrel, holder: "A", lease: 100 * ms, want: integer(1),
					expect: []keyWant{{holder: tombstone, ttl: 100 * ms}, {suffix: ":waiters", absent: true}}},
				{at: 0, script: mren, holder: "A", lease: 100 * ms, want: integer(0), unchanged: true},
				{at: 0, script: macq, holder: "B", lease: 100 * ms, extra: registers, want: granted()},
				// The lease's last millisecond: still held, retry in 1 ms.
				{at: 100 * ms, script: macq, holder: "C", lease: 100 * ms, extra: registers, want: busy(1),
					expect: []keyWant{{suffix: ":waiters", members: []string{"C"}, under: []string{"B"}}}},
				{at: 101 * ms, script: macq, holder: "C", lease: 100 * ms, extra: registers, want: granted(),
					expect: []keyWant{{holder: "C", waiters: "0"}, {suffix: ":waiters", absent: true}}},
				// Offered in the microsecond of the grant: the fence still
				// rises. The offer lasts LG_OFFER_MS though the releaser's
				// lease is shorter: the waiter may count it held that long.
				{at: 101 * ms, script: macq, holder: "D", lease: 100 * ms, extra: registers, want: busy(100)},
				{at: 101 * ms, script: mrel, holder: "C", lease: 100 * ms, want: handedTo("D"),
					expect: []keyWant{{holder: "D", waiters: "1", ttl: offer, handed: true}}},
				// Declined in that microsecond, nobody registered: a
				// tombstone again, which keeps the offer's TTL.
				{at: 101 * ms, script: mrel, holder: "D", lease: 100 * ms, want: integer(1),
					expect: []keyWant{{holder: tombstone, ttl: offer}, {suffix: ":waiters", absent: true}}},
				{at: 101 * ms, script: macq, holder: "E", lease: 100 * ms, extra: registers, want: granted()},
			},
			wakes: []string{grantWake("D"), "all"},
		},
		{
			// The server's clock steps back 30 ms: fences still rise, as
			// each one counts on from the last, which the tombstone keeps
			// for the rest of the lease and the floor.
			name: "mutex-clock-step-back", fam: mutexFamily, shimOnly: true,
			steps: []step{
				{at: 50 * ms, script: macq, holder: "A", lease: 100 * ms, extra: registers, want: granted()},
				{at: 20 * ms, script: mrel, holder: "A", lease: 100 * ms, want: integer(1),
					expect: []keyWant{{holder: tombstone, ttl: 130 * ms}}},
				{at: 20 * ms, script: macq, holder: "B", lease: 100 * ms, extra: registers, want: granted()},
				{at: 20 * ms, script: macq, holder: "C", lease: 100 * ms, extra: registers, want: busy(100)},
				{at: 20 * ms, script: mrel, holder: "B", lease: 100 * ms, want: handedTo("C"),
					expect: []keyWant{{holder: "C", waiters: "1", ttl: offer, handed: true}}},
				{at: 20 * ms, script: mrel, holder: "C", lease: 100 * ms, want: integer(1),
					expect: []keyWant{{holder: tombstone, ttl: offer}}},
				// Back at A's microsecond, the tombstone frees the lock
				// with a fence above all of them.
				{at: 50 * ms, script: macq, holder: "D", lease: 100 * ms, extra: registers, want: granted(),
					expect: []keyWant{{holder: "D", waiters: "0", ttl: 100 * ms}}},
			},
			wakes: []string{grantWake("C"), "all"},
		},
		{
			name: "tomb-fair", fam: fairFamily, shimOnly: true,
			steps: []step{
				{at: 0, script: facq, holder: "A", lease: 100 * ms, want: granted()},
				// Released in the microsecond of the grant, nobody waiting:
				// a tombstone keeps the fence for the floor.
				{at: 0, script: frel, holder: "A", lease: 100 * ms, want: integer(1),
					expect: []keyWant{{holder: tombstone, floorOnly: true}}},
				{at: 0, script: facq, holder: "B", lease: 100 * ms, want: granted()},
				{at: 0, script: facq, holder: "C", lease: 100 * ms, want: busy(100)},
				// Handed over in the same microsecond: the fence still rises.
				{at: 0, script: frel, holder: "B", lease: 100 * ms, want: handedTo("C"),
					expect: []keyWant{{holder: "C", ttl: 100 * ms, handed: true}}},
				{at: 0, script: fhb, holder: "C", lease: 100 * ms, want: integer(0)},
				// Given back unused in that microsecond, nobody waiting: a
				// tombstone again.
				{at: 0, script: frel, holder: "C", lease: 100 * ms, want: integer(1),
					expect: []keyWant{{holder: tombstone, floorOnly: true}}},
				{at: 0, script: facq, holder: "D", lease: 100 * ms, want: granted()},
			},
			wakes: []string{grantWake("C")},
		},
		{
			name: "tomb-rw", fam: rwFamily, shimOnly: true,
			steps: []step{
				{at: 0, script: lua.ReadAcquire, holder: "R", lease: 100 * ms, want: granted()},
				{at: 0, script: lua.ReadRelease, holder: "R", lease: 100 * ms, want: integer(1),
					expect: []keyWant{{fields: []string{"f"}, floorOnly: true, fenced: true}}},
				{at: 0, script: lua.WriteAcquire, holder: "W", lease: 100 * ms, want: granted()},
				{at: 0, script: lua.WriteRelease, holder: "W", lease: 100 * ms, want: integer(1),
					expect: []keyWant{{fields: []string{"f"}, floorOnly: true, fenced: true}}},
				{at: 0, script: lua.ReadAcquire, holder: "R", lease: 100 * ms, want: granted()},
			},
		},
		{
			name: "tomb-sem", fam: semFamily, shimOnly: true,
			steps: []step{
				{at: 0, script: lua.SemaphoreAcquire, holder: "A", lease: 100 * ms, extra: []string{"1"}, want: granted()},
				{at: 0, script: lua.SemaphoreRelease, holder: "A", lease: 100 * ms, want: integer(1),
					expect: []keyWant{{fields: []string{"f"}, floorOnly: true, fenced: true}}},
				{at: 0, script: lua.SemaphoreAcquire, holder: "B", lease: 100 * ms, extra: []string{"1"}, want: granted()},
			},
		},
	}
}
