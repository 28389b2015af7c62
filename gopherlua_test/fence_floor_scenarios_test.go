package gopherlua_test

import (
	"time"

	"github.com/lockgen/lockgen/lua"
)

// fenceFloorScenarios: after a failover to a master whose clock is behind
// (or a restart on another host), every grant's fence must still rise
// (granted and handed check it against every fence seen before), whether
// the last holder released (a tombstone) or its lease simply ended (its key
// lives on for the fence floor, lua.FenceFloor). The *-floor-ahead
// scenarios run on both targets: the lock arrives with a fence 5 s ahead of
// the clock (step.ahead), as from a master whose clock ran ahead. The
// *-floor-step-back ones step the shim's clock itself back by seconds, which
// a real server's clock cannot do, so they run in the shim only; runtime's
// failover test shows the same on two redis-servers.
func fenceFloorScenarios() []*scenario {
	return append(floorAheadScenarios(), floorStepBackScenarios()...)
}

func floorAheadScenarios() []*scenario {
	const ahead = 5 * time.Second
	macq, mrel := lua.MutexAcquire, lua.MutexRelease
	facq, frel := lua.FairAcquire, lua.FairRelease
	racq, wacq, wrel := lua.ReadAcquire, lua.WriteAcquire, lua.WriteRelease
	sacq, srel := lua.SemaphoreAcquire, lua.SemaphoreRelease
	return []*scenario{
		{
			name: "mutex-floor-ahead", fam: mutexFamily,
			steps: []step{
				{at: 0, ahead: ahead},
				{at: 10 * ms, script: macq, holder: "A", lease: 500 * ms, extra: window(0), want: granted()},
				// A's lease ended at 510 ms without a release: B's first
				// attempt reads the lease (every busy path does) and
				// takes the lock above A's fence.
				{at: 750 * ms, script: macq, holder: "B", lease: 500 * ms, extra: registers, want: granted(),
					expect: []keyWant{{holder: "B", waiters: "0", ttl: 500 * ms}, {suffix: ":waiters", absent: true}}},
				{at: 800 * ms, script: mrel, holder: "B", lease: 500 * ms, want: integer(1), expect: retired(mutexFamily)},
				{at: 850 * ms, script: macq, holder: "C", lease: 500 * ms, extra: window(0), want: granted()},
			},
		},
		{
			name: "fair-floor-ahead", fam: fairFamily,
			steps: []step{
				{at: 0, ahead: ahead},
				{at: 10 * ms, script: facq, holder: "A", lease: 500 * ms, want: granted()},
				{at: 700 * ms, script: facq, holder: "B", lease: 500 * ms, want: granted(),
					expect: []keyWant{{holder: "B", ttl: 500 * ms}}},
				{at: 750 * ms, script: frel, holder: "B", lease: 500 * ms, want: integer(1), expect: retired(fairFamily)},
				{at: 800 * ms, script: facq, holder: "C", lease: 500 * ms, want: granted()},
			},
		},
		{
			name: "rw-floor-ahead", fam: rwFamily,
			steps: []step{
				{at: 0, ahead: ahead},
				{at: 10 * ms, script: racq, holder: "R", lease: 500 * ms, want: granted()},
				{at: 700 * ms, script: wacq, holder: "W", lease: 500 * ms, want: granted(), expect: []keyWant{{fenced: true}}},
				{at: 750 * ms, script: wrel, holder: "W", lease: 500 * ms, want: integer(1), expect: retired(rwFamily)},
				{at: 800 * ms, script: racq, holder: "R2", lease: 500 * ms, want: granted()},
			},
		},
		{
			name: "sem-floor-ahead", fam: semFamily,
			steps: []step{
				{at: 0, ahead: ahead},
				{at: 10 * ms, script: sacq, holder: "A", lease: 500 * ms, extra: []string{"1"}, want: granted()},
				{at: 700 * ms, script: sacq, holder: "B", lease: 500 * ms, extra: []string{"1"}, want: granted(),
					expect: []keyWant{{fenced: true}}},
				{at: 750 * ms, script: srel, holder: "B", lease: 500 * ms, want: integer(1), expect: retired(semFamily)},
				{at: 800 * ms, script: sacq, holder: "C", lease: 500 * ms, extra: []string{"1"}, want: granted()},
			},
		},
	}
}

func floorStepBackScenarios() []*scenario {
	const sec = 1000 * ms
	macq, mren, mrel := lua.MutexAcquire, lua.MutexRenew, lua.MutexRelease
	facq, fhb, frel := lua.FairAcquire, lua.FairHeartbeat, lua.FairRelease
	racq, rrel, wacq := lua.ReadAcquire, lua.ReadRelease, lua.WriteAcquire
	sacq, srel := lua.SemaphoreAcquire, lua.SemaphoreRelease
	return []*scenario{
		{
			name: "mutex-floor-step-back", fam: mutexFamily, shimOnly: true,
			steps: []step{
				{at: 5 * sec, script: macq, holder: "A", lease: sec, extra: registers, want: granted()},
				{at: 5100 * ms, script: mrel, holder: "A", lease: sec, want: integer(1), expect: retired(mutexFamily)},
				// The clock is now 4.1 s behind: the tombstone's fence
				// still counts.
				{at: 1 * sec, script: macq, holder: "B", lease: sec, extra: window(0), want: granted()},
				// B's lease ended at 2 s: its renewal is refused, although
				// nobody took the lock (its runtime gave it up by then).
				{at: 2200 * ms, script: mren, holder: "B", lease: sec, want: integer(0)},
				// B's lease ended without a release: its key,
				// kept for the floor, still carries its fence, and C's
				// first attempt takes the lock above it.
				{at: 3500 * ms, script: macq, holder: "C", lease: sec, extra: registers, want: granted(),
					expect: []keyWant{{holder: "C", waiters: "0", ttl: sec}}},
				{at: 3600 * ms, script: macq, holder: "D", lease: sec, extra: window(0), want: busy(900)},
				// Another step back, by 3.1 s: a live lease only looks
				// longer (C's now ends 4 s from now); it never ends early.
				{at: 500 * ms, script: macq, holder: "D", lease: sec, extra: window(0), want: busy(1000)},
				{at: 4600 * ms, script: macq, holder: "E", lease: sec, extra: window(0), want: granted()},
			},
		},
		{
			name: "fair-floor-step-back", fam: fairFamily, shimOnly: true,
			steps: []step{
				{at: 5 * sec, script: facq, holder: "A", lease: sec, want: granted()},
				{at: 5100 * ms, script: frel, holder: "A", lease: sec, want: integer(1), expect: retired(fairFamily)},
				{at: 1 * sec, script: facq, holder: "B", lease: sec, want: granted()},
				{at: 2500 * ms, script: facq, holder: "C", lease: sec, want: granted(),
					expect: []keyWant{{holder: "C", ttl: sec}}},
				{at: 2600 * ms, script: facq, holder: "D", lease: sec, want: busy(900)},
				// C's lease ended at 3.5 s: D's heartbeat finds the lock
				// free and hands it to D, above C's fence.
				{at: 3550 * ms, script: fhb, holder: "D", lease: sec, want: keptFor(1000),
					expect: []keyWant{{holder: "D", ttl: sec, handed: true}}},
				{at: 3600 * ms, script: facq, holder: "D", lease: sec, want: sameGrant()},
			},
			wakes: []string{grantWake("D")},
		},
		{
			name: "rw-floor-step-back", fam: rwFamily, shimOnly: true,
			steps: []step{
				{at: 5 * sec, script: racq, holder: "R", lease: sec, want: granted()},
				{at: 5100 * ms, script: rrel, holder: "R", lease: sec, want: integer(1), expect: retired(rwFamily)},
				{at: 1 * sec, script: wacq, holder: "W", lease: sec, want: granted()},
				// W's lease ended at 2 s, R2's at 3.5 s: the hash keeps f.
				{at: 2500 * ms, script: racq, holder: "R2", lease: sec, want: granted(), expect: []keyWant{{fenced: true}}},
				{at: 4 * sec, script: wacq, holder: "W2", lease: sec, want: granted(), expect: []keyWant{{fenced: true}}},
			},
		},
		{
			name: "sem-floor-step-back", fam: semFamily, shimOnly: true,
			steps: []step{
				{at: 5 * sec, script: sacq, holder: "A", lease: sec, extra: []string{"1"}, want: granted()},
				{at: 5100 * ms, script: srel, holder: "A", lease: sec, want: integer(1), expect: retired(semFamily)},
				{at: 1 * sec, script: sacq, holder: "B", lease: sec, extra: []string{"1"}, want: granted()},
				{at: 2500 * ms, script: sacq, holder: "C", lease: sec, extra: []string{"1"}, want: granted(),
					expect: []keyWant{{fenced: true}}},
			},
		},
	}
}
