package harness

import (
	"context"
	"math"
	"slices"

	"github.com/redis/go-redis/v9"

	"github.com/lockgen/lockgen/bench/peers"
)

// Workload 5 spreads the hot key over more processes: Opts.ProcGoroutines
// goroutines in each of P processes, for every P in Opts.Processes. A fleet
// grows by processes, not by goroutines, and what a lock costs Redis per
// grant may grow with the number of processes that wait (each one has its
// own subscription and its own waiters to wake) even when it does not grow
// with goroutines. The measure is the one of workload 2: commands Redis
// executed per grant (scripts' commands included), Redis CPU per grant,
// grants per second and the handoff in PING round trips.

// procPeers are the peers of workload 5: lockgen's two exclusive kinds and,
// from each other library, the settings that compete on handoff latency.
// The polling libraries at their defaults wait 50 ms and more between
// tries, which says nothing new at more processes and would only lengthen
// the run.
func procPeers() []peers.Peer {
	var out []peers.Peer
	for _, name := range []string{"lockgen/mutex", "lockgen/fair", "redsync/tuned", "redislock/tuned", "rueidislock/default", "rueidislock/tuned"} {
		if p, ok := peers.ByName(name); ok {
			out = append(out, p)
		}
	}
	return out
}

// runProcesses is one repetition of workload 5. Peers run in order for each
// process count; unavailable ones (see isUnavailable) are recorded with
// their error and not started.
func runProcesses(ctx context.Context, addr string, rdb *redis.Client, o Options, order []peers.Peer, unavailable func(string) (bool, string), logf func(string, ...any)) []ContendedResult {
	var out []ContendedResult
	for _, procs := range o.Processes {
		shape := hotKeyShape{Procs: procs, Goroutines: procs * o.ProcGoroutines}
		for _, p := range order {
			if skip, why := unavailable(p.Name()); skip {
				out = append(out, ContendedResult{Peer: p.Name(), Procs: procs, Goroutines: shape.Goroutines, Err: why})
				continue
			}
			c := runContended(ctx, addr, rdb, p, shape, o.ProcDuration, o.Hold)
			logf("processes %d×%d %-20s PING %v %6.0f/s handoff p50 %v executed/grant %.2f CPU/grant %v overlaps %d %s",
				procs, o.ProcGoroutines, p.Name(), c.Ping.P50, c.Throughput, c.Handoff.P50, c.ExecutedPerGrant, c.ServerCPUPerGrant, c.Overlaps, c.Err)
			out = append(out, c)
		}
	}
	return out
}

// findProcesses is peer's workload-5 run at procs processes in r, if it
// gave any grant.
func findProcesses(r Rep, peer string, procs int) (ContendedResult, bool) {
	for _, c := range r.Processes {
		if c.Peer == peer && c.Procs == procs && c.Grants > 0 {
			return c, true
		}
	}
	return ContendedResult{}, false
}

func processesMetric(peer string, procs int, f func(ContendedResult, Rep) float64) func(Rep) float64 {
	return func(r Rep) float64 {
		c, ok := findProcesses(r, peer, procs)
		if !ok {
			return math.NaN()
		}
		return f(c, r)
	}
}

// executedGrowth is peer's executed commands per grant at procs processes
// divided by the figure at base processes, both from repetition r.
func executedGrowth(r Rep, peer string, procs, base int) float64 {
	at := processesMetric(peer, procs, func(c ContendedResult, _ Rep) float64 { return c.ExecutedPerGrant })
	from := processesMetric(peer, base, func(c ContendedResult, _ Rep) float64 { return c.ExecutedPerGrant })
	return ratio(at(r), from(r))
}

// processRange is the fewest and the most processes of workload 5; ok is
// false when it does not run.
func processRange(o Options) (lo, hi int, ok bool) {
	if len(o.Processes) == 0 {
		return 0, 0, false
	}
	return slices.Min(o.Processes), slices.Max(o.Processes), true
}
