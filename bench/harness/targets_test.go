package harness

import (
	"math"
	"testing"
	"time"
)

func uncontendedResult(peer string, p50Micros, redisMicros float64) UncontendedResult {
	return UncontendedResult{
		Peer:        peer,
		Cycle:       Latency{N: 100, P50: time.Duration(p50Micros * float64(time.Microsecond))},
		Ping:        Latency{N: 100, P50: 50 * time.Microsecond},
		RedisMicros: redisMicros,
	}
}

func findTarget(ts []Target, peer, what string) (Target, bool) {
	for _, t := range ts {
		if t.Peer == peer && t.What == what {
			return t, true
		}
	}
	return Target{}, false
}

// Workload 1's rows against redislock/default take the ratio inside each
// repetition and then the median and range; lockgen/mutex has the limits,
// lockgen/fair is reported.
func TestUncontendedTargets(t *testing.T) {
	const (
		cycle = "uncontended cycle p50 ÷ redislock/default's"
		redis = "Redis time per uncontended cycle (INFO commandstats, each command once) ÷ redislock/default's"
	)
	opts := Options{UncontendedIters: 100, Peers: byNames("lockgen/mutex", "lockgen/fair", "redislock/default", "redislock/tuned")}
	rep := func(mutexP50, mutexRedis, baseP50, baseRedis float64) Rep {
		return Rep{Uncontended: []UncontendedResult{
			uncontendedResult("lockgen/mutex", mutexP50, mutexRedis),
			uncontendedResult("lockgen/fair", 2*baseP50, 3*baseRedis),
			uncontendedResult("redislock/default", baseP50, baseRedis),
			uncontendedResult("redislock/tuned", 10, 1), // not the divisor
		}}
	}
	cases := []struct {
		name                string
		reps                []Rep
		cycle, redis        Spread
		cyclePass, redisRes string
	}{
		// Per repetition 1.04, 2.0, 1.0: median 1.04, a pass. The medians
		// of the figures, 150 and 100, would make 1.5.
		// Redis time 12/5, 10/6, 11/5: median 2.2, over 2.
		{"ratios per repetition", []Rep{rep(104, 12, 100, 5), rep(200, 10, 100, 6), rep(150, 11, 150, 5)},
			Spread{Median: 1.04, Min: 1.0, Max: 2.0, N: 3}, Spread{Median: 2.2, Min: 10.0 / 6, Max: 2.4, N: 3}, "pass", "FAIL"},
		{"one repetition, over and under", []Rep{rep(110, 9, 100, 5)},
			Spread{Median: 1.1, Min: 1.1, Max: 1.1, N: 1}, Spread{Median: 1.8, Min: 1.8, Max: 1.8, N: 1}, "FAIL", "pass"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ts := evaluateTargets(&Results{Opts: opts, Reps: tc.reps})
			for _, c := range []struct {
				what, result string
				want         Spread
			}{{cycle, tc.cyclePass, tc.cycle}, {redis, tc.redisRes, tc.redis}} {
				got, ok := findTarget(ts, "lockgen/mutex", c.what)
				if !ok {
					t.Fatalf("no lockgen/mutex row %q", c.what)
				}
				if !spreadNear(got.Measured, c.want) || got.Result() != c.result {
					t.Errorf("%s: %+v %s, want %+v %s", c.what, got.Measured, got.Result(), c.want, c.result)
				}
				fair, ok := findTarget(ts, "lockgen/fair", c.what)
				if !ok || fair.Result() != "reported" || fair.Limit != "none" {
					t.Errorf("lockgen/fair row %q: %+v, want reported without a limit", c.what, fair)
				}
			}
		})
	}
}

// Without redislock/default in the run the rows read n/a, never pass.
func TestUncontendedTargetsWithoutBaseline(t *testing.T) {
	opts := Options{UncontendedIters: 100, Peers: byNames("lockgen/mutex", "redislock/tuned")}
	ts := uncontendedTargets(&Results{Opts: opts, Reps: []Rep{{Uncontended: []UncontendedResult{
		uncontendedResult("lockgen/mutex", 100, 10), uncontendedResult("redislock/tuned", 100, 5),
	}}}})
	if len(ts) != 2 {
		t.Fatalf("%d rows, want 2", len(ts))
	}
	for _, tg := range ts {
		if tg.Result() != "n/a" {
			t.Errorf("%s: %s without redislock/default", tg.What, tg.Result())
		}
	}
}

// Fair's executed commands per grant on workload 2's hot key are reported
// at 8 goroutines, and only there.
func TestFairHotKeyExecutedReported(t *testing.T) {
	opts := Options{Goroutines: []int{8, 64}, Peers: byNames("lockgen/mutex", "lockgen/fair")}
	hot := func(peer string, n int, executed float64) ContendedResult {
		return ContendedResult{Peer: peer, Procs: hotKeyProcs, Goroutines: n, Grants: 100, ExecutedPerGrant: executed}
	}
	reps := []Rep{
		{Contended: []ContendedResult{hot("lockgen/fair", 8, 24), hot("lockgen/fair", 64, 40), hot("lockgen/mutex", 8, 10)}},
		{Contended: []ContendedResult{hot("lockgen/fair", 8, 20), hot("lockgen/fair", 64, 40), hot("lockgen/mutex", 8, 10)}},
		{Contended: []ContendedResult{hot("lockgen/fair", 8, 30), hot("lockgen/fair", 64, 40), hot("lockgen/mutex", 8, 10)}},
	}
	ts := evaluateTargets(&Results{Opts: opts, Reps: reps})
	got, ok := findTarget(ts, "lockgen/fair", "executed commands per grant, hot key, 8 goroutines in 2 processes")
	if !ok {
		t.Fatal("no row for fair's executed commands per grant at 8 goroutines")
	}
	if want := (Spread{Median: 24, Min: 20, Max: 30, N: 3}); !spreadNear(got.Measured, want) || got.Result() != "reported" {
		t.Errorf("fair at 8 goroutines: %+v %s, want %+v reported", got.Measured, got.Result(), want)
	}
	for _, tg := range ts {
		if tg.What == "executed commands per grant, hot key, 64 goroutines in 2 processes" || (tg.Peer == "lockgen/mutex" && tg.What == got.What) {
			t.Errorf("unexpected row %s | %s", tg.Peer, tg.What)
		}
	}
}

func spreadNear(a, b Spread) bool {
	near := func(x, y float64) bool { return math.Abs(x-y) < 1e-9 }
	return a.N == b.N && near(a.Median, b.Median) && near(a.Min, b.Min) && near(a.Max, b.Max)
}
