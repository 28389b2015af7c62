package gopherlua_test

import (
	"fmt"
	"strconv"
	"time"

	"github.com/lockgen/lockgen/lua"
)

// floorAt is mutex_floor's ARGV[4]: the fence floor d after the target's
// start, in µs like a fence.
func floorAt(d time.Duration) func(time.Time) []string {
	return func(start time.Time) []string {
		return []string{strconv.FormatInt(start.Add(d).UnixMicro(), 10)}
	}
}

// floored: mutex_floor's reply is the lock's fence after raising it to the
// floor d after the start: the higher of the holder's fence and the floor.
// It becomes the fence of the holder's grant.
func floored(d time.Duration) check {
	return func(r *run, st *step, got any) error {
		fence, ok := got.(int64)
		want := max(r.fences[st.side()], r.tg.start().Add(d).UnixMicro())
		if !ok || fence != want {
			return fmt.Errorf("reply %#v, want the fence %d", got, want)
		}
		r.setFence(st.side(), fence)
		r.lastFence = max(r.lastFence, fence)
		return nil
	}
}

// mutexFloorScenarios: mutex_floor restarts the holder's lease and raises
// its fence to the floor; the key keeps that fence for the fence floor
// after the lease (lua.FenceFloor), so the next grant's fence is above it
// whether the holder releases or vanishes.
func mutexFloorScenarios() []*scenario {
	acq, floor, rel := lua.MutexAcquire, lua.MutexFloor, lua.MutexRelease
	return []*scenario{
		{
			// A floor below the fence only restarts the lease; one 3 s
			// ahead raises the fence (the waiters flag stays) without
			// lengthening the lease. C registered under the old fence;
			// A's release offers C the lock with a fence above the raised
			// one. C declines (its release, nobody else registered): the
			// tombstone keeps that fence for the rest of the offer and the
			// floor, and the next grant is above it.
			name: "mutex-floor-release", fam: mutexFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 1000 * ms, extra: registers, want: granted()},
				{at: 100 * ms, script: acq, holder: "B", lease: 1000 * ms, extra: window(0), want: busy(900), unchanged: true},
				{at: 200 * ms, script: floor, holder: "A", lease: 1000 * ms, extraAt: floorAt(-time.Second), want: floored(-time.Second), leaseOnly: true,
					expect: []keyWant{{holder: "A", waiters: "0", ttl: 1000 * ms}}},
				{at: 300 * ms, script: acq, holder: "C", lease: 1000 * ms, extra: registers, want: busy(900),
					expect: []keyWant{{suffix: ":waiters", members: []string{"C"}, under: []string{"A"}}}},
				{at: 400 * ms, script: floor, holder: "A", lease: 1000 * ms, extraAt: floorAt(3 * time.Second), want: floored(3 * time.Second),
					expect: []keyWant{{holder: "A", waiters: "1", ttl: 1000 * ms}}},
				{at: 500 * ms, script: floor, holder: "B", lease: 1000 * ms, extraAt: floorAt(4 * time.Second), want: integer(0), unchanged: true},
				// The own acquire sees the raised fence. B being marked,
				// it publishes "taken" as the claim of an offer would
				// (no offer is out: a message nobody waits for).
				{at: 600 * ms, script: acq, holder: "A", lease: 1000 * ms, extra: registers, want: sameGrant()},
				{at: 700 * ms, script: rel, holder: "A", lease: 1000 * ms, ownFence: true, want: handedTo("C"),
					expect: []keyWant{{holder: "C", waiters: "1", ttl: offer, handed: true}, {suffix: ":waiters", absent: true}}},
				{at: 800 * ms, script: rel, holder: "C", lease: 1000 * ms, want: integer(1),
					expect: []keyWant{{holder: tombstone, ttl: offer - 100*ms}, {suffix: ":waiters", absent: true}}},
				{at: 900 * ms, script: acq, holder: "B", lease: 1000 * ms, extra: window(0), want: granted(),
					expect: []keyWant{{holder: "B", waiters: "0", ttl: 1000 * ms}}},
			},
			wakes: []string{takenWake("A"), grantWake("C"), "all"},
		},
		{
			// A holder that vanishes: its lease ends as usual, the key
			// keeps the raised fence, and the next grant is above it; the
			// old holder's renewal is refused.
			name: "mutex-floor-expiry", fam: mutexFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 500 * ms, extra: registers, want: granted()},
				{at: 100 * ms, script: floor, holder: "A", lease: 500 * ms, extraAt: floorAt(1500 * ms), want: floored(1500 * ms),
					expect: []keyWant{{holder: "A", waiters: "0", ttl: 500 * ms}}},
				// A renewal with the same floor keeps the fence.
				{at: 200 * ms, script: floor, holder: "A", lease: 500 * ms, extraAt: floorAt(1500 * ms), want: floored(1500 * ms), leaseOnly: true},
				{at: 800 * ms, script: acq, holder: "B", lease: 500 * ms, extra: window(0), want: granted()},
				{at: 900 * ms, script: floor, holder: "A", lease: 500 * ms, extraAt: floorAt(1500 * ms), want: integer(0), unchanged: true},
			},
		},
		{
			// Floors the script refuses, before any write.
			name: "mutex-floor-malformed", fam: mutexFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 1000 * ms, extra: registers, want: granted()},
				{at: 10 * ms, script: floor, holder: "A", lease: 1000 * ms, extraAt: floorAt(25 * 24 * time.Hour),
					want: fails("ERR lockgen: fence floor more than 2^31 ms ahead"), unchanged: true},
			},
		},
	}
}
