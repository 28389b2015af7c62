package gopherlua_test

import (
	"testing"
	"time"

	"github.com/lockgen/lockgen/lua"
	"github.com/lockgen/lockgen/redistest"
)

func allScenarios() []*scenario {
	var all []*scenario
	all = append(all, mutexScenarios()...)
	all = append(all, mutexHandOverScenarios()...)
	all = append(all, mutexInvariantScenarios()...)
	all = append(all, mutexFloorScenarios()...)
	all = append(all, fairScenarios()...)
	all = append(all, fairHandOverScenarios()...)
	all = append(all, rwScenarios()...)
	all = append(all, semaphoreScenarios()...)
	all = append(all, idempotenceScenarios()...)
	all = append(all, malformedScenarios()...)
	all = append(all, edgeScenarios()...)
	all = append(all, latchScenarios()...)
	all = append(all, opsScenarios()...)
	all = append(all, fenceFloorScenarios()...)
	return all
}

// TestScenarios plays every scenario in the shim and on one real
// redis-server (scenarios in parallel, on distinct keys, so the real-time
// run takes as long as the longest scenario), checks each run against the
// scenario's expectations, and then checks that the two runs agree reply for
// reply and key for key, time-valued numbers within realTolerance.
func TestScenarios(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	tol := float64(realTolerance.Milliseconds())
	for _, sc := range allScenarios() {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			if sc.shimOnly {
				shim := newShimTarget(t, []string{sc.wakeChannel()})
				defer shim.close()
				play(t, sc, shim, 0)
				return
			}
			// The real run first, then the shim on the real run's
			// timeline: timestamps of both count from one start, however
			// long either run took on a loaded machine.
			real := newRedisTarget(t, rdb, []string{sc.wakeChannel()}, sc.sharded)
			defer real.close()
			online := play(t, sc, real, realTolerance)
			shim := newShimTargetAt(t, []string{sc.wakeChannel()}, real.start())
			defer shim.close()
			offline := play(t, sc, shim, 0)
			for i := range sc.steps {
				st := &sc.steps[i]
				if !sameStepReply(st, offline[i].reply, online[i].reply, shim.start(), real.start(), tol) {
					t.Errorf("step %d (%s at %v): shim replied %#v, redis-server %#v", i, st.label(), st.at, offline[i].reply, online[i].reply)
				}
				if !sameKeys(offline[i].keys, online[i].keys, shim.start(), real.start(), tol) {
					t.Errorf("step %d (%s at %v): keys differ\nshim         %v\nredis-server %v", i, st.label(), st.at, offline[i].keys, online[i].keys)
				}
			}
		})
	}
}

// sameStepReply is sameReply, but for the one script whose integer reply
// is time-valued: fair_heartbeat's ms until the lock's lease ends (0, not
// queued, stays exact).
func sameStepReply(st *step, a, b any, sa, sb time.Time, tol float64) bool {
	x, xok := a.(int64)
	y, yok := b.(int64)
	if st.script == lua.FairHeartbeat && xok && yok && x > 0 && y > 0 {
		return sameNumber(float64(x), float64(y), sa, sb, true, tol)
	}
	return sameReply(a, b, sa, sb, tol)
}
