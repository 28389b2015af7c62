package harness

import (
	"math"
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
		MemoryPeers:    byNames("lockgen/mutex", "redislock/default"),
	}}
	mk := func(peer string, g int, perSec float64, p50 time.Duration) ManyKeysResult {
		return ManyKeysResult{Peer: peer, Goroutines: g, Cycles: 100, Throughput: perSec, Cycle: Latency{N: 100, P50: p50}}
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
		Memory: []HeldMemoryResult{{Peer: "lockgen/mutex", UsagePerLock: 100}, {Peer: "redislock/default", UsagePerLock: 80}},
	}}
	want := map[string]float64{
		"many keys, 64 goroutines: cycles/s of the best shipped lockgen/mutex backend ÷ the best other library's": 0.75,
		"many keys, 64 goroutines: cycles/s on the default backend (go-redis) ÷ redislock/default's":              0.8,
		"many keys, 1 goroutine: cycle p50 of the shipped backend best at 64 goroutines ÷ the default backend's":  1.2,
		"Redis memory per held lock (MEMORY USAGE, 10 held) ÷ redislock/default's":                                1.25,
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
