package gopherlua_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

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
	all = append(all, fairHeartbeatScenarios()...)
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
			// long either run took on a loaded machine. The shim plays
			// each step at its scheduled time, so a real run that fell
			// behind its schedule wrote its TTLs later: if the two then
			// disagree, both are played again, as playOnRedis does with
			// a late run that failed its own expectations.
			for attempt := 0; ; attempt++ {
				diffs, late := playBoth(t, rdb, sc, tol)
				if len(diffs) == 0 || late <= realTolerance/2 || attempt == maxReplays {
					for _, d := range diffs {
						t.Error(d)
					}
					return
				}
				t.Logf("run %d fell %v behind its schedule and differs from the shim (%d steps, first: %s): played again", attempt+1, late.Round(time.Millisecond), len(diffs), diffs[0])
			}
		})
	}
}

// playBoth plays sc on the real server, then in the shim on the real run's
// timeline, and returns where the two disagree and how far the real run
// fell behind its schedule.
func playBoth(t *testing.T, rdb *redis.Client, sc *scenario, tol float64) (diffs []string, late time.Duration) {
	t.Helper()
	real, online := playOnRedis(t, rdb, sc)
	defer real.close()
	shim := newShimTargetAt(t, []string{sc.wakeChannel()}, real.start())
	defer shim.close()
	offline := play(t, sc, shim, 0)
	return compareRuns(sc, offline, online, shim.start(), real.start(), tol), real.lateness()
}

// compareRuns lists the steps at which the shim's run and the real one
// disagree, reply or keys (time-valued numbers within tol).
func compareRuns(sc *scenario, offline, online []stepResult, shimStart, realStart time.Time, tol float64) []string {
	var diffs []string
	for i := range sc.steps {
		st := &sc.steps[i]
		if !sameStepReply(st, offline[i].reply, online[i].reply, shimStart, realStart, tol) {
			diffs = append(diffs, fmt.Sprintf("step %d (%s at %v): shim replied %#v, redis-server %#v", i, st.label(), st.at, offline[i].reply, online[i].reply))
		}
		if !sameKeys(offline[i].keys, online[i].keys, shimStart, realStart, tol) {
			diffs = append(diffs, fmt.Sprintf("step %d (%s at %v): keys differ\nshim         %v\nredis-server %v", i, st.label(), st.at, offline[i].keys, online[i].keys))
		}
	}
	return diffs
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

// maxReplays bounds how often playOnRedis plays a scenario again.
const maxReplays = 3

// playOnRedis plays sc on the real server. A run that failed while it fell
// behind its schedule by more than half of realTolerance (a loaded machine
// descheduled it between steps, so the TTLs it read were older than the
// scenario assumes) is played again from clean keys, at most maxReplays
// times; a run on schedule reports its failures at once, and so does the
// last replay, however late. A fault in a script fails every run.
func playOnRedis(t *testing.T, rdb *redis.Client, sc *scenario) (*redisTarget, []stepResult) {
	t.Helper()
	for attempt := 0; ; attempt++ {
		if err := rdb.Del(context.Background(), sc.dataKeys()...).Err(); err != nil {
			t.Fatalf("clean %s's keys: %v", sc.name, err)
		}
		real := newRedisTarget(t, rdb, []string{sc.wakeChannel()}, sc.sharded)
		var rec errorRecorder
		online := play(&rec, sc, real, realTolerance)
		if len(rec.errs) == 0 || real.lateness() <= realTolerance/2 || attempt == maxReplays {
			for _, e := range rec.errs {
				t.Error(e)
			}
			return real, online
		}
		t.Logf("run %d fell %v behind its schedule and failed (%d errors, first: %s): played again", attempt+1, real.lateness().Round(time.Millisecond), len(rec.errs), rec.errs[0])
		real.close()
	}
}

// errorRecorder keeps the errors play reports.
type errorRecorder struct{ errs []string }

func (*errorRecorder) Helper() {}

func (e *errorRecorder) Errorf(format string, args ...any) {
	e.errs = append(e.errs, fmt.Sprintf(format, args...))
}
