package harness

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/lockgen/lockgen/bench/peers"
)

// Workload 8 in the report: its table and its targets.

// maxIdleExecutedPerWaiter is the most commands per second Redis may
// execute for one lockgen caller waiting on a held lock (issue 24).
const maxIdleExecutedPerWaiter = 0.2

// findIdle is row's workload-8 result in shape procs in r, if it measured
// without an error (a waiter that got a held lock, a holder that lost
// one, a failed waiter: the measure is void).
func findIdle(r Rep, row string, procs int) (IdleWaitersResult, bool) {
	for _, w := range r.Idle {
		if w.Row == row && w.Procs == procs && w.Err == "" {
			return w, true
		}
	}
	return IdleWaitersResult{}, false
}

func idleMetric(row string, procs int, f func(IdleWaitersResult) float64) func(Rep) float64 {
	return func(r Rep) float64 {
		w, ok := findIdle(r, row, procs)
		if !ok {
			return math.NaN()
		}
		return f(w)
	}
}

// idleShape names a shape: "100 waiters in 1 process", "10 processes × 10
// waiters".
func idleShape(waiters, procs int) string {
	if procs == 1 {
		return fmt.Sprintf("%d waiters in 1 process", waiters)
	}
	return fmt.Sprintf("%d processes × %d waiters", procs, waiters/max(procs, 1))
}

// idleTargets: for every lockgen row of workload 8 and every shape, the
// commands Redis executes per second for one waiting caller, beyond what
// the holders cost alone.
func idleTargets(res *Results) []Target {
	o := res.Opts
	if o.IdleWaiters <= 0 {
		return nil
	}
	var out []Target
	for _, row := range o.IdleRows {
		if !isLockgen(row.Waiter) {
			continue
		}
		for _, procs := range o.IdleProcs {
			out = append(out, newTarget(row.Name,
				fmt.Sprintf("idle waiters, %s: executed commands/s per waiting caller ((with waiters − holders alone) ÷ %d)", idleShape(o.IdleWaiters, procs), o.IdleWaiters),
				fmt.Sprintf("≤ %.1f/s", maxIdleExecutedPerWaiter), "/s",
				overReps(res.Reps, idleMetric(row.Name, procs, IdleWaitersResult.ExecutedPerWaiter)),
				func(v float64) bool { return v <= maxIdleExecutedPerWaiter }))
		}
	}
	return out
}

func writeIdleWaiters(p func(string, ...any), res *Results) {
	o := res.Opts
	p("## 8. Idle waiters: %d callers waiting on %d held keys", o.IdleWaiters, o.IdleWaiters)
	p("")
	p("%d holders in the harness process take %d keys with a lease of %v, renewed as their library renews (lockgen and rueidislock by their watchdog, redsync and redislock by the goroutine per lock a user writes, every lease/3), and keep them. First the holders alone are measured for %v; then, in each shape, %d waiters, one per key, wait on them from worker processes, and after %v of settling another window of %v is measured. Nothing is granted: the waiters' cost is what they add to the holders' own. Executed: INFO commandstats calls (a script's inner commands included, the harness's INFO excluded); Redis CPU: INFO cpu user + sys; both per second. Per waiter = (with waiters − holders alone) ÷ %d. The windows are two leases long, a multiple of lease/3, so that each holds the same number of the holders' renewal rounds, and a multiple of a fair waiter's heartbeat period (2/3 lease), so that each holds the same number of heartbeats per waiter whatever their phase (a one-lease window held one or two). Sent: what the waiters' own clients sent inside their window (Pub/Sub excluded), per waiter. Mix: the commands whose rate grew, per waiter and second. Acquired (must be 0): waiters that got a lock whose holder still held it; a row with one is left out, as is one whose holders lost a lock. %d repetition(s).",
		o.IdleWaiters, o.IdleWaiters, o.IdleLease, o.IdleWindow, o.IdleWaiters, o.IdleSettle, o.IdleWindow, o.IdleWaiters, o.repsOf("idlewaiters"))
	p("")
	p("| waiters | holders | shape | executed/s, holders alone | executed/s, with waiters | executed/s per waiter | Redis CPU ms/s, holders alone | Redis CPU ms/s, with waiters | Redis CPU ms/s per waiter | sent/s per waiter | mix per waiter and second | acquired |")
	p("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, row := range o.IdleRows {
		for _, procs := range o.IdleProcs {
			metric := func(f func(IdleWaitersResult) float64, decimals int) string {
				return fmtSpread(overReps(res.Reps, idleMetric(row.Name, procs, f)), decimals)
			}
			mix, acquired := "—", "—"
			if w, ok := middleIdle(res.Reps, row.Name, procs); ok {
				mix = w.Mix
			}
			if n, seen := idleAcquired(res.Reps, row.Name, procs); seen {
				acquired = fmt.Sprint(n)
			}
			p("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |", row.Name, row.Holder, idleShape(o.IdleWaiters, procs),
				metric(func(w IdleWaitersResult) float64 { return w.Alone.ExecutedPerSec() }, 1),
				metric(func(w IdleWaitersResult) float64 { return w.With.ExecutedPerSec() }, 1),
				metric(IdleWaitersResult.ExecutedPerWaiter, 3),
				metric(func(w IdleWaitersResult) float64 { return w.Alone.CPUMillisPerSec() }, 2),
				metric(func(w IdleWaitersResult) float64 { return w.With.CPUMillisPerSec() }, 2),
				metric(IdleWaitersResult.CPUPerWaiter, 4),
				metric(func(w IdleWaitersResult) float64 { return ratio(w.SentPerSec, float64(w.Waiters)) }, 3),
				mix, acquired)
		}
	}
	p("")
}

// middleIdle is row's result in the middle repetition that measured it.
func middleIdle(reps []Rep, row string, procs int) (IdleWaitersResult, bool) {
	var found []IdleWaitersResult
	for _, r := range reps {
		if w, ok := findIdle(r, row, procs); ok {
			found = append(found, w)
		}
	}
	if len(found) == 0 {
		return IdleWaitersResult{}, false
	}
	return found[len(found)/2], true
}

// idleAcquired sums the waiters that got a held lock over every
// repetition of row in shape procs, errors or not; seen is false when the
// row never ran there.
func idleAcquired(reps []Rep, row string, procs int) (n int, seen bool) {
	for _, r := range reps {
		for _, w := range r.Idle {
			if w.Row == row && w.Procs == procs {
				n += w.Acquired
				seen = true
			}
		}
	}
	return n, seen
}

// idlePeers are the peers workload 8 runs, holders and waiters, for the
// report's table of settings.
func idlePeers(rows []IdleRow) []peers.Peer {
	var names []string
	for _, row := range rows {
		for _, name := range []string{row.Waiter, row.Holder} {
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	return byNames(names...)
}

// SelectIdleRows keeps the rows whose waiters are of a peer named in the
// comma-separated list (lockgen/read keeps the row of readers behind a
// writer).
func SelectIdleRows(rows []IdleRow, list string) []IdleRow {
	want := map[string]bool{}
	for _, name := range strings.Split(list, ",") {
		want[strings.TrimSpace(name)] = true
	}
	var out []IdleRow
	for _, row := range rows {
		if want[row.Waiter] {
			out = append(out, row)
		}
	}
	return out
}
