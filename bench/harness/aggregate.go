package harness

import (
	"math"
	"strings"
	"time"
)

// The report shows, for every metric, the median over repetitions and its
// range. Ratios are taken inside one repetition (against the PING floor and
// the peers measured in that same repetition) and only then aggregated, so
// that a slow moment of the shared machine shifts both sides together.

func overReps(reps []Rep, f func(Rep) float64) Spread {
	xs := make([]float64, len(reps))
	for i, r := range reps {
		xs[i] = f(r)
	}
	return spreadOf(xs)
}

func findUncontended(r Rep, peer string) (UncontendedResult, bool) {
	for _, u := range r.Uncontended {
		if u.Peer == peer && u.Err == "" {
			return u, true
		}
	}
	return UncontendedResult{}, false
}

func findContended(r Rep, peer string, n int) (ContendedResult, bool) {
	for _, c := range r.Contended {
		if c.Peer == peer && c.Goroutines == n && c.Grants > 0 {
			return c, true
		}
	}
	return ContendedResult{}, false
}

func findHeld(r Rep, peer string) (HeldManyResult, bool) {
	for _, h := range r.Held {
		if h.Peer == peer && h.Err == "" {
			return h, true
		}
	}
	return HeldManyResult{}, false
}

// floorMicros is the physical floor of a cycle: two PING round trips, timed
// interleaved with the cycles of the same peer.
func floorMicros(u UncontendedResult) float64 { return 2 * micros(u.Ping.P50) }

// rttMicros is one PING round trip, timed just before the hot-key run.
func rttMicros(c ContendedResult) float64 { return micros(c.Ping.P50) }

func isLockgen(peer string) bool { return strings.HasPrefix(peer, "lockgen/") }

// bestPeerUncontended is the lowest p50 cycle among the other libraries.
func bestPeerUncontended(r Rep) float64 {
	best := math.NaN()
	for _, u := range r.Uncontended {
		if !isLockgen(u.Peer) && u.Err == "" && (math.IsNaN(best) || micros(u.Cycle.P50) < best) {
			best = micros(u.Cycle.P50)
		}
	}
	return best
}

// bestPeerHandoff is the lowest handoff p50 of workload 2 at n goroutines
// among the other libraries whose names pass keep.
func bestPeerHandoff(r Rep, n int, keep func(peer string) bool) float64 {
	return bestHandoff(r.Contended, func(c ContendedResult) bool { return c.Goroutines == n && keep(c.Peer) })
}

// bestHandoff is the lowest handoff p50 among the runs in cs that keep
// accepts and that measured a handoff.
func bestHandoff(cs []ContendedResult, keep func(ContendedResult) bool) float64 {
	best := math.NaN()
	for _, c := range cs {
		if c.Grants == 0 || c.Handoff.N == 0 || !keep(c) {
			continue
		}
		if v := micros(c.Handoff.P50); math.IsNaN(best) || v < best {
			best = v
		}
	}
	return best
}

func notLockgen(peer string) bool { return !isLockgen(peer) }

func uncontendedMetric(peer string, f func(UncontendedResult, Rep) float64) func(Rep) float64 {
	return func(r Rep) float64 {
		u, ok := findUncontended(r, peer)
		if !ok {
			return math.NaN()
		}
		return f(u, r)
	}
}

func contendedMetric(peer string, n int, f func(ContendedResult, Rep) float64) func(Rep) float64 {
	return func(r Rep) float64 {
		c, ok := findContended(r, peer, n)
		if !ok {
			return math.NaN()
		}
		return f(c, r)
	}
}

func heldMetric(peer string, f func(HeldManyResult) float64) func(Rep) float64 {
	return func(r Rep) float64 {
		h, ok := findHeld(r, peer)
		if !ok {
			return math.NaN()
		}
		return f(h)
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
