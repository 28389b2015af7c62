package harness

import (
	"math"
	"slices"
	"time"
)

// Latency summarises a sample of durations by nearest-rank percentiles.
type Latency struct {
	N   int
	P50 time.Duration
	P99 time.Duration
	Max time.Duration
}

func summarize(sample []time.Duration) Latency {
	if len(sample) == 0 {
		return Latency{}
	}
	s := slices.Clone(sample)
	slices.Sort(s)
	return Latency{N: len(s), P50: percentile(s, 50), P99: percentile(s, 99), Max: s[len(s)-1]}
}

// percentile returns the nearest-rank p-th percentile of a sorted sample.
func percentile(sorted []time.Duration, p float64) time.Duration {
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = max(1, min(rank, len(sorted)))
	return sorted[rank-1]
}

// Spread is the median and range of one metric over repetitions.
type Spread struct {
	Median, Min, Max float64
	N                int
}

func spreadOf(xs []float64) Spread {
	var ok []float64
	for _, x := range xs {
		if !math.IsNaN(x) {
			ok = append(ok, x)
		}
	}
	if len(ok) == 0 {
		return Spread{Median: math.NaN(), Min: math.NaN(), Max: math.NaN()}
	}
	slices.Sort(ok)
	m := ok[len(ok)/2]
	if len(ok)%2 == 0 {
		m = (ok[len(ok)/2-1] + ok[len(ok)/2]) / 2
	}
	return Spread{Median: m, Min: ok[0], Max: ok[len(ok)-1], N: len(ok)}
}

// micros converts a duration to fractional microseconds, the unit of the
// report.
func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// ratio is a/b, NaN when b is zero or either side is missing.
func ratio(a, b float64) float64 {
	if b == 0 || math.IsNaN(a) || math.IsNaN(b) {
		return math.NaN()
	}
	return a / b
}
