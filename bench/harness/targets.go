package harness

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/lockgen/lockgen/bench/peers"
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
	// Reported rows carry no limit: a lockgen kind measured the way a
	// target of the other kind is, for comparison.
	Reported bool
}

// Result is "pass", "FAIL", "n/a", or "reported" for a row without a limit.
func (t Target) Result() string {
	switch {
	case t.Missing:
		return "n/a"
	case t.Reported:
		return "reported"
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
		out = append(out, newTarget(peer, what, limit, unit, s, pass))
	}
	lockgens := lockgenPeers(res.Opts)
	for _, lp := range lockgens {
		if res.Opts.UncontendedIters == 0 {
			break
		}
		add(lp, "uncontended cycle p50 / 2×PING p50", "≤ 1.3", "×",
			overReps(res.Reps, uncontendedMetric(lp, func(u UncontendedResult, r Rep) float64 {
				return ratio(micros(u.Cycle.P50), floorMicros(u))
			})), func(v float64) bool { return v <= 1.3 })
	}
	out = append(out, uncontendedTargets(res)...)
	for _, n := range res.Opts.Goroutines {
		if n == fairHotKeyGoroutines && slices.Contains(lockgens, "lockgen/fair") {
			out = append(out, reportedTarget("lockgen/fair", fmt.Sprintf("executed commands per grant, hot key, %d goroutines in %d processes", n, hotKeyProcs), "",
				overReps(res.Reps, contendedMetric("lockgen/fair", n, func(c ContendedResult, _ Rep) float64 { return c.ExecutedPerGrant }))))
		}
		for _, lp := range lockgens {
			rtts := maxHandoffRTT(lp, n)
			add(lp, fmt.Sprintf("handoff p50 in PING round trips, %d goroutines", n), fmt.Sprintf("≤ %g", rtts), "RTT",
				overReps(res.Reps, contendedMetric(lp, n, func(c ContendedResult, r Rep) float64 {
					return ratio(micros(c.Handoff.P50), rttMicros(c))
				})), func(v float64) bool { return v <= rtts })
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
		add(hp.Name(), fmt.Sprintf("round trips per second holding %d locks (lease %v; pipelines of up to %d renewals per node per lease/3 = %.1f/s)", res.Opts.HeldLocks, res.Opts.HeldLease, renewBatch, ideal),
			fmt.Sprintf("≤ %.1f/s", 2*ideal), "/s",
			overReps(res.Reps, heldMetric(hp.Name(), func(h HeldManyResult) float64 { return h.CallsPerSec })),
			func(v float64) bool { return v <= 2*ideal })
	}
	out = append(out, processTargets(res)...)
	out = append(out, manyKeysTargets(res)...)
	return append(out, idleTargets(res)...)
}

// maxHandoffRTT is workload 2's limit on the handoff p50 in PING round
// trips: 3 for every lockgen kind, and 2 for the mutex at 8 goroutines,
// whose hand-over within a process is the release's reply and whose
// hand-over across processes is the wake message (the claim follows after
// the waiter returned when the waiter's first registration dates the
// offer, as it does on a hot key).
func maxHandoffRTT(peer string, goroutines int) float64 {
	if peer == "lockgen/mutex" && goroutines == 8 {
		return 2
	}
	return 3
}

// newTarget checks the median of s with pass.
func newTarget(peer, what, limit, unit string, s Spread, pass func(float64) bool) Target {
	t := Target{Peer: peer, What: what, Limit: limit, Unit: unit, Measured: s, Missing: math.IsNaN(s.Median)}
	if !t.Missing {
		t.Pass = pass(s.Median)
	}
	return t
}

// reportedTarget is a row without a limit: measured the way a target is,
// for comparison.
func reportedTarget(peer, what, unit string, s Spread) Target {
	return Target{Peer: peer, What: what, Limit: "none", Unit: unit, Measured: s, Missing: math.IsNaN(s.Median), Reported: true}
}

// Workload 1's limits against redislock/default, the library whose
// acquire and release are one round trip each like lockgen's, at the retry
// its README shows.
const (
	uncontendedBaseline    = "redislock/default"
	maxCycleVsBaseline     = 1.05 // cycle p50 ÷ redislock's
	maxRedisTimeVsBaseline = 2.0  // Redis time per cycle ÷ redislock's
)

// fairHotKeyGoroutines is workload 2's run whose executed commands per fair
// grant are reported next to workload 5's limit for them.
const fairHotKeyGoroutines = 8

// uncontendedTargets are workload 1's rows against redislock/default, each
// ratio taken inside one repetition: lockgen/mutex's cycle p50 and the
// Redis time of its cycle (INFO commandstats, each command once), with
// limits; the same for the other lockgen kinds, reported.
func uncontendedTargets(res *Results) []Target {
	if res.Opts.UncontendedIters == 0 {
		return nil
	}
	var out []Target
	vsBaseline := func(lp string, f func(UncontendedResult) float64) Spread {
		return overReps(res.Reps, func(r Rep) float64 {
			pick := func(u UncontendedResult, _ Rep) float64 { return f(u) }
			return ratio(uncontendedMetric(lp, pick)(r), uncontendedMetric(uncontendedBaseline, pick)(r))
		})
	}
	for _, lp := range lockgenPeers(res.Opts) {
		out = append(out,
			limitOnlyForMutex(newTarget(lp, "uncontended cycle p50 ÷ "+uncontendedBaseline+"'s", fmt.Sprintf("≤ %.2f", maxCycleVsBaseline), "×",
				vsBaseline(lp, func(u UncontendedResult) float64 { return micros(u.Cycle.P50) }),
				func(v float64) bool { return v <= maxCycleVsBaseline })),
			limitOnlyForMutex(newTarget(lp, "Redis time per uncontended cycle (INFO commandstats, each command once) ÷ "+uncontendedBaseline+"'s", fmt.Sprintf("≤ %.0f", maxRedisTimeVsBaseline), "×",
				vsBaseline(lp, func(u UncontendedResult) float64 { return u.RedisMicros }),
				func(v float64) bool { return v <= maxRedisTimeVsBaseline })))
	}
	return out
}

// idealRenewCalls is one pipeline per node every lease/3.
func idealRenewCalls(o Options) float64 {
	batches := math.Ceil(float64(o.HeldLocks) / renewBatch)
	return renewNodes * batches / (o.HeldLease.Seconds() / 3)
}

// renewBatch is the most renewals the runtime's watchdog puts in one
// pipeline, so that one slow batch cannot cost every lock its lease.
const renewBatch = 1000

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

// Workload 5's limits. A mutex grant costs about ten commands on one
// process; waiters in more processes may add to that, but not in proportion
// to their number. A fair grant may cost more (the queue), up to its own
// limit.
const (
	maxExecutedGrowth       = 1.5 // executed per grant, most processes ÷ fewest
	maxExecutedPerGrant     = 12  // executed per grant at the most processes, mutex
	maxFairExecutedPerGrant = 16  // the same, fair
	maxProcHandoffRTT       = 3.3 // handoff p50 in PING round trips
	maxProcHandoffRatio     = 1.0 // handoff p50 ÷ the best other library's
)

// processTargets are workload 5's rows: for lockgen/mutex, how executed
// commands per grant grow from the fewest to the most processes and what
// they come to there, and its handoff at the most processes against the
// PING round trip and the best other library in the same repetition. For
// lockgen/fair, executed commands per grant at the most processes have a
// limit of their own; their growth is reported, without a limit. (At the
// fewest processes, two, the shape is workload 2's at 8 goroutines, whose
// handoff has targets of its own.)
func processTargets(res *Results) []Target {
	lo, hi, ok := processRange(res.Opts)
	if !ok {
		return nil
	}
	var out []Target
	add := func(peer, what, limit, unit string, s Spread, pass func(float64) bool) {
		out = append(out, newTarget(peer, what, limit, unit, s, pass))
	}
	g := res.Opts.ProcGoroutines
	for _, lp := range []string{"lockgen/mutex", "lockgen/fair"} {
		if !hasPeer(res.Opts.ProcPeers, lp) {
			continue
		}
		if hi > lo {
			out = append(out, limitOnlyForMutex(newTarget(lp, fmt.Sprintf("executed commands per grant, %d processes ÷ %d processes (%d goroutines each)", hi, lo, g),
				fmt.Sprintf("≤ %.1f", maxExecutedGrowth), "×",
				overReps(res.Reps, func(r Rep) float64 { return executedGrowth(r, lp, hi, lo) }),
				func(v float64) bool { return v <= maxExecutedGrowth })))
		}
		limit := maxExecutedPerGrant
		if lp == "lockgen/fair" {
			limit = maxFairExecutedPerGrant
		}
		add(lp, fmt.Sprintf("executed commands per grant, %d processes × %d goroutines", hi, g),
			fmt.Sprintf("≤ %d", limit), "",
			overReps(res.Reps, processesMetric(lp, hi, func(c ContendedResult, _ Rep) float64 { return c.ExecutedPerGrant })),
			func(v float64) bool { return v <= float64(limit) })
	}
	if !hasPeer(res.Opts.ProcPeers, "lockgen/mutex") {
		return out
	}
	mutex := func(f func(ContendedResult, Rep) float64) Spread {
		return overReps(res.Reps, processesMetric("lockgen/mutex", hi, f))
	}
	add("lockgen/mutex", fmt.Sprintf("handoff p50 in PING round trips, %d processes × %d goroutines", hi, g),
		fmt.Sprintf("≤ %.1f", maxProcHandoffRTT), "RTT",
		mutex(func(c ContendedResult, _ Rep) float64 { return ratio(handoffMicros(c, 50), rttMicros(c)) }),
		func(v float64) bool { return v <= maxProcHandoffRTT })
	add("lockgen/mutex", fmt.Sprintf("lockgen ÷ best other library, handoff p50, %d processes × %d goroutines", hi, g),
		fmt.Sprintf("≤ %.0f", maxProcHandoffRatio), "×",
		mutex(func(c ContendedResult, r Rep) float64 {
			return ratio(handoffMicros(c, 50), bestHandoff(r.Processes, func(o ContendedResult) bool {
				return o.Procs == hi && notLockgen(o.Peer)
			}))
		}),
		func(v float64) bool { return v <= maxProcHandoffRatio })
	return out
}

// limitOnlyForMutex makes t, a row whose limit is lockgen/mutex's, a
// reported row without a limit for the other lockgen kinds: measured the
// same way, for comparison.
func limitOnlyForMutex(t Target) Target {
	if t.Peer != "lockgen/mutex" {
		t.Reported, t.Limit, t.Pass = true, "none", false
	}
	return t
}

func hasPeer(ps []peers.Peer, name string) bool {
	return slices.ContainsFunc(ps, func(p peers.Peer) bool { return p.Name() == name })
}
