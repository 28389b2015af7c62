package harness

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

// The many-keys targets compare, inside each repetition, lockgen's mutex on
// its best backend with the best other library, its default backend with
// redislock's, the best backend's p50 at 1 goroutine with the default's,
// and memory with redislock's.
func TestManyKeysTargets(t *testing.T) {
	res := &Results{Opts: Options{
		ManyGoroutines: []int{1, 64},
		ManyPeers:      byNames("lockgen/mutex", "lockgen/mutex-rueidis", "lockgen/mutex-autopipeline", "redislock/default", "rueidislock/tuned"),
		MemoryLocks:    10,
		MemoryPeers:    byNames("lockgen/mutex", "lockgen/mutex-shortids", "redislock/default"),
	}}
	mk := func(peer string, g int, perSec float64, p50 time.Duration) ManyKeysResult {
		// Redis CPU per cycle falls with throughput here: 1e6/perSec µs.
		return ManyKeysResult{Peer: peer, Goroutines: g, Cycles: 100, Throughput: perSec, Cycle: Latency{N: 100, P50: p50}, RedisCPU: 1e6 / perSec}
	}
	res.Reps = []Rep{{
		ManyKeys: []ManyKeysResult{
			mk("lockgen/mutex", 1, 5000, 100*time.Microsecond),
			mk("lockgen/mutex-rueidis", 1, 4000, 120*time.Microsecond),
			mk("lockgen/mutex", 64, 20000, 0),
			mk("lockgen/mutex-rueidis", 64, 30000, 0),      // best shipped backend at 64
			mk("lockgen/mutex-autopipeline", 64, 35000, 0), // not shipped: no candidate
			mk("redislock/default", 64, 25000, 0),
			mk("rueidislock/tuned", 64, 40000, 0), // best other library
		},
		Memory: []HeldMemoryResult{{Peer: "lockgen/mutex", UsagePerLock: 120}, {Peer: "lockgen/mutex-shortids", UsagePerLock: 92}, {Peer: "redislock/default", UsagePerLock: 80}},
	}}
	want := map[string]float64{
		"many keys, 64 goroutines: cycles/s of the best shipped lockgen/mutex backend ÷ the best other library's":    0.75,
		"many keys, 64 goroutines: cycles/s on the default backend (go-redis) ÷ redislock/default's":                 0.8,
		"many keys, 1 goroutine: cycle p50 of the shipped backend best at 64 goroutines ÷ the default backend's":     1.2,
		"Redis memory per held lock (MEMORY USAGE, 10 held) ÷ redislock/default's":                                   1.5,
		"Redis memory per held lock (MEMORY USAGE, 10 held, short holder ids (WithHolderIDs)) ÷ redislock/default's": 92.0 / 80,
		// Lowest CPU: mutex-rueidis 33.3 µs, rueidislock 25 µs.
		"many keys, 64 goroutines: Redis CPU per cycle of the shipped lockgen/mutex backend lowest on it ÷ the lowest other library's": 40000.0 / 30000,
		"many keys, 64 goroutines: Redis CPU per cycle on the default backend (go-redis) ÷ redislock/default's":                        25000.0 / 20000,
	}
	got := manyKeysTargets(res)
	if len(got) != len(want) {
		t.Fatalf("%d targets, want %d: %+v", len(got), len(want), got)
	}
	for _, tg := range got {
		w, ok := want[tg.What]
		if !ok {
			t.Errorf("unexpected target %q", tg.What)
			continue
		}
		if math.Abs(tg.Measured.Median-w) > 1e-9 || tg.Pass || tg.Result() != "FAIL" {
			t.Errorf("%s: measured %v (%s), want %v and FAIL", tg.What, tg.Measured.Median, tg.Result(), w)
		}
	}
}

// The Redis CPU rows take each side's lowest CPU per cycle inside one
// repetition (a backend that is not shipped is no candidate), then the
// median and range over repetitions, and say how many measured them.
func TestManyKeysCPUTargets(t *testing.T) {
	res := &Results{Opts: Options{
		ManyGoroutines: []int{16, 64, 256},
		ManyPeers:      byNames("lockgen/mutex", "lockgen/mutex-rueidis", "lockgen/mutex-autopipeline", "redislock/default", "rueidislock/tuned"),
	}}
	cpu := func(peer string, g int, micros float64) ManyKeysResult {
		return ManyKeysResult{Peer: peer, Goroutines: g, Cycles: 100, Throughput: 1000, RedisCPU: micros}
	}
	rep := func(mutex, rueidis, redislock, rueidislock float64) Rep {
		var ms []ManyKeysResult
		for _, g := range []int{16, 64, 256} {
			ms = append(ms, cpu("lockgen/mutex", g, mutex), cpu("lockgen/mutex-rueidis", g, rueidis),
				cpu("lockgen/mutex-autopipeline", g, 1), // not shipped: never the lowest
				cpu("redislock/default", g, redislock), cpu("rueidislock/tuned", g, rueidislock))
		}
		return Rep{ManyKeys: ms}
	}
	res.Reps = []Rep{rep(20, 15, 25, 30), rep(30, 40, 25, 20), rep(24, 30, 20, 30), {}, {}}
	// Best backend ÷ best other: 15/25, 30/20, 24/20 → 0.6, 1.5, 1.2.
	// Default ÷ redislock: 20/25, 30/25, 24/20 → 0.8, 1.2, 1.2.
	for _, g := range []int{64, 256} {
		for what, want := range map[string]Spread{
			fmt.Sprintf("many keys, %d goroutines: Redis CPU per cycle of the shipped lockgen/mutex backend lowest on it ÷ the lowest other library's", g): {Median: 1.2, Min: 0.6, Max: 1.5, N: 3},
			fmt.Sprintf("many keys, %d goroutines: Redis CPU per cycle on the default backend (go-redis) ÷ redislock/default's", g):                        {Median: 1.2, Min: 0.8, Max: 1.2, N: 3},
		} {
			var found bool
			for _, tg := range manyKeysTargets(res) {
				if tg.What != what {
					continue
				}
				found = true
				if !spreadNear(tg.Measured, want) || tg.Result() != "FAIL" || tg.Limit != "≤ 1.0" {
					t.Errorf("%s: %+v %s (limit %s), want %+v FAIL", what, tg.Measured, tg.Result(), tg.Limit, want)
				}
			}
			if !found {
				t.Errorf("no target %q", what)
			}
		}
	}
	for _, tg := range manyKeysTargets(res) {
		if strings.Contains(tg.What, "16 goroutines") {
			t.Errorf("target at 16 goroutines: %s", tg.What)
		}
	}
	// Under the limit it passes.
	res.Reps = []Rep{rep(20, 15, 25, 30)}
	for _, tg := range manyKeysTargets(res) {
		if strings.Contains(tg.What, "Redis CPU") && tg.Result() != "pass" {
			t.Errorf("%s: %+v %s, want pass", tg.What, tg.Measured, tg.Result())
		}
	}
}
