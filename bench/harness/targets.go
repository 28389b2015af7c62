package harness

import (
	"fmt"
	"math"
	"strings"
)

// Target is one promise lockgen makes about its cost, checked against the
// measurements of the same run. Nothing here is typed in: Measured and Pass
// come from the repetitions' medians.
type Target struct {
	Peer     string // the lockgen peer it is checked for
	What     string
	Limit    string
	Measured Spread
	Unit     string
	Pass     bool
	Missing  bool // no measurement (peer unavailable or failed)
}

// Result is "pass", "FAIL" or "n/a".
func (t Target) Result() string {
	switch {
	case t.Missing:
		return "n/a"
	case t.Pass:
		return "pass"
	}
	return "FAIL"
}

// renewNodes is the number of Redis nodes in workload 4: one server.
const renewNodes = 1

func evaluateTargets(res *Results) []Target {
	var out []Target
	add := func(peer, what, limit, unit string, s Spread, pass func(float64) bool) {
		t := Target{Peer: peer, What: what, Limit: limit, Unit: unit, Measured: s, Missing: math.IsNaN(s.Median)}
		if !t.Missing {
			t.Pass = pass(s.Median)
		}
		out = append(out, t)
	}
	lockgens := lockgenPeers(res.Opts)
	for _, lp := range lockgens {
		add(lp, "uncontended cycle p50 / 2×PING p50", "≤ 1.3", "×",
			overReps(res.Reps, uncontendedMetric(lp, func(u UncontendedResult, r Rep) float64 {
				return ratio(micros(u.Cycle.P50), floorMicros(u))
			})), func(v float64) bool { return v <= 1.3 })
	}
	for _, n := range res.Opts.Goroutines {
		for _, lp := range lockgens {
			add(lp, fmt.Sprintf("handoff p50 in PING round trips, %d goroutines", n), "≤ 3", "RTT",
				overReps(res.Reps, contendedMetric(lp, n, func(c ContendedResult, r Rep) float64 {
					return ratio(micros(c.Handoff.P50), rttMicros(c))
				})), func(v float64) bool { return v <= 3 })
			add(lp, fmt.Sprintf("best polling peer at defaults ÷ lockgen, handoff p50, %d goroutines", n), "≥ 10", "×",
				overReps(res.Reps, contendedMetric(lp, n, func(c ContendedResult, r Rep) float64 {
					return ratio(bestPeerHandoff(r, n, pollingDefault(res.Opts)), micros(c.Handoff.P50))
				})), func(v float64) bool { return v >= 10 })
			add(lp, fmt.Sprintf("lockgen ÷ best rueidislock, handoff p50, %d goroutines", n), "≤ 1", "×",
				overReps(res.Reps, contendedMetric(lp, n, func(c ContendedResult, r Rep) float64 {
					return ratio(micros(c.Handoff.P50), bestPeerHandoff(r, n, func(p string) bool { return strings.HasPrefix(p, "rueidislock/") }))
				})), func(v float64) bool { return v <= 1 })
			add(lp, fmt.Sprintf("commands sent per grant, %d goroutines", n), "≤ 4", "",
				overReps(res.Reps, contendedMetric(lp, n, func(c ContendedResult, r Rep) float64 {
					return c.CommandsPerGrant
				})), func(v float64) bool { return v <= 4 })
		}
	}
	for _, hp := range res.Opts.HeldPeers {
		if !isLockgen(hp.Name()) {
			continue
		}
		ideal := idealRenewCalls(res.Opts)
		add(hp.Name(), fmt.Sprintf("round trips per second holding %d locks (lease %v; one pipeline per node per lease/3 = %.1f/s)", res.Opts.HeldLocks, res.Opts.HeldLease, ideal),
			fmt.Sprintf("≤ %.1f/s", 2*ideal), "/s",
			overReps(res.Reps, heldMetric(hp.Name(), func(h HeldManyResult) float64 { return h.CallsPerSec })),
			func(v float64) bool { return v <= 2*ideal })
	}
	return out
}

// idealRenewCalls is one pipeline per node every lease/3.
func idealRenewCalls(o Options) float64 {
	return renewNodes / (o.HeldLease.Seconds() / 3)
}

func lockgenPeers(o Options) []string {
	var out []string
	for _, p := range o.Peers {
		if isLockgen(p.Name()) {
			out = append(out, p.Name())
		}
	}
	return out
}

// pollingDefault keeps the polling libraries at their default settings.
func pollingDefault(o Options) func(string) bool {
	keep := map[string]bool{}
	for _, p := range o.Peers {
		if p.Polls && p.Setting == "default" {
			keep[p.Name()] = true
		}
	}
	return func(name string) bool { return keep[name] }
}
