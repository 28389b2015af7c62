package harness

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/lockgen/lockgen/bench/peers"
)

// WriteMarkdown writes the report: where and how the numbers were taken,
// lockgen's targets with pass/fail, then one table per workload. svgName is
// the chart's file name relative to the report ("" for none).
func WriteMarkdown(w io.Writer, res *Results, svgName string) error {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	writeHeader(p, res)
	writeTargets(p, res)
	writeSettings(p, res.Opts)
	writeSections(p, res)
	writeCharts(p, res.Opts, svgName)
	writeErrors(p, res)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeHeader writes the title, how to read the report, and the machine,
// server and command it ran on.
func writeHeader(p func(string, ...any), res *Results) {
	o, m := res.Opts, res.Machine
	p("# Benchmarks: lockgen next to the Go Redis lock libraries")
	p("")
	p("Written by `bench/cmd/lockbench`; do not edit by hand, run `make bench`. Each cell is the median over the repetitions of its workload (%s), with [min–max] over them where the spread matters. Ratios are taken inside one repetition (against the PING floor and the other libraries measured in that same repetition), then aggregated. Numbers from a shared machine are noisy: compare ratios, not absolute times. The targets' reps column is how many repetitions measured the row: its verdict is on their median.", repsText(o))
	p("")
	p("| | |")
	p("| --- | --- |")
	p("| date | %s |", res.Started.UTC().Format("2006-01-02 15:04 MST"))
	p("| machine | %s, %d cores, %s |", m.CPU, m.Cores, m.OS)
	p("| Go | %s |", m.GoVer)
	p("| server | %s, one server on 127.0.0.1 started by the harness |", m.RedisV)
	p("| command | `%s` |", m.Command)
	p("| run time | %v |", res.Elapsed.Round(time.Second))
	p("")
}

// writeTargets writes lockgen's targets with their verdicts, then each
// lockgen peer's script floor.
func writeTargets(p func(string, ...any), res *Results) {
	o := res.Opts
	p("## Targets for lockgen")
	p("")
	p("| lockgen | target | limit | measured | reps | result |")
	p("| --- | --- | --- | --- | --- | --- |")
	for _, t := range evaluateTargets(res) {
		p("| %s | %s | %s | %s | %d | %s |", t.Peer, t.What, t.Limit, fmtSpread(t.Measured, 2)+unitSuffix(t.Unit, t.Missing), t.Measured.N, t.Result())
	}
	p("")
	for _, lp := range lockgenPeers(res.Opts) {
		if o.UncontendedIters == 0 {
			break
		}
		floor := overReps(res.Reps, uncontendedMetric(lp, func(u UncontendedResult, _ Rep) float64 {
			return ratio(2*micros(u.EmptyScript.P50), floorMicros(u))
		}))
		own := overReps(res.Reps, uncontendedMetric(lp, func(u UncontendedResult, _ Rep) float64 {
			return ratio(micros(u.Cycle.P50), 2*micros(u.EmptyScript.P50))
		}))
		p("Script floor, %s pass: two EVALSHAs of an empty script took %s × two PINGs; the cycle took %s × those two empty script calls (section 1).", lp, fmtSpread(floor, 2), fmtSpread(own, 2))
		p("")
	}
}

// writeSettings writes every peer measured, once, with how it waits,
// renews and is set up.
func writeSettings(p func(string, ...any), o Options) {
	p("## Libraries and settings")
	p("")
	p("| peer | waiters | lease renewal | settings |")
	p("| --- | --- | --- | --- |")
	listed := map[string]bool{}
	for _, list := range [][]peers.Peer{o.Peers, o.ManyPeers, idlePeers(o.IdleRows)} {
		for _, pr := range list {
			if !listed[pr.Name()] {
				listed[pr.Name()] = true
				p("| %s | %s | %s | %s |", pr.Name(), waiting(pr), renewal(pr), pr.Notes)
			}
		}
	}
	p("")
	p("\"default\" is what the library does with no options (for redislock, whose default is a single try, the retry its README shows); \"tuned\" is what a user reading its documentation would set for low latency.")
	p("")
}

// writeSections writes the section of each workload that ran.
func writeSections(p func(string, ...any), res *Results) {
	o := res.Opts
	if o.UncontendedIters > 0 {
		writeUncontended(p, res)
	}
	for _, n := range o.Goroutines {
		writeHotKey(p, res, n)
	}
	if len(o.Goroutines) > 0 {
		writeFairness(p, res)
	}
	if len(o.HeldPeers) > 0 {
		writeHeld(p, res)
	}
	if len(o.Processes) > 0 {
		writeProcesses(p, res)
	}
	if len(o.ManyGoroutines) > 0 && len(o.ManyPeers) > 0 {
		writeManyKeys(p, res)
	}
	if o.MemoryLocks > 0 && len(o.MemoryPeers) > 0 {
		writeMemory(p, res)
	}
	if o.IdleWaiters > 0 && len(o.IdleRows) > 0 && len(o.IdleProcs) > 0 {
		writeIdleWaiters(p, res)
	}
}

// writeCharts links the charts drawn beside the report.
func writeCharts(p func(string, ...any), o Options, svgName string) {
	if svgName != "" && len(o.Goroutines) > 0 {
		p("## Handoff latency chart")
		p("")
		p("![handoff latency p50 and p99 per library](%s)", svgName)
		p("")
	}
	if svgName != "" && len(o.Processes) > 0 {
		p("## Executed commands per grant against processes")
		p("")
		p("![executed commands per grant against the number of processes, lockgen mutex and fair](%s)", besideHandoffChart(svgName, ProcessesChartFile))
		p("")
	}
	if svgName != "" && len(o.ManyGoroutines) > 0 && len(o.ManyPeers) > 0 {
		p("## Many keys: throughput against goroutines")
		p("")
		p("![cycles per second against goroutines, every library on many keys](%s)", besideHandoffChart(svgName, ManyKeysChartFile))
		p("")
	}
}

func writeUncontended(p func(string, ...any), res *Results) {
	p("## 1. Uncontended acquire + release")
	p("")
	p("One goroutine takes a free lock and gives it back, %d times per repetition. The floor is two PING round trips on another go-redis connection, one PING timed after every cycle, so that the floor is measured under the same load as the cycles. The script floor is two EVALSHAs of an empty script (`return 1`), timed after each PING on the same connection: what any lock pays whose acquire and release are one script call each, before its scripts do any work. Allocations (whole process, background goroutines included) and Redis time are counted in a separate pass of the same number of cycles without the PINGs.", res.Opts.UncontendedIters)
	p("")
	p("Redis µs / cycle is the time Redis spent executing the cycle's commands, from INFO commandstats (`usec`), each command counted once. Summing `usec` over every cmdstat line would count a script's inner calls twice: a script's line (EVALSHA) includes what its `redis.call`s took, and Redis 7 counts each of those again under its own name. So the report counts a script's line whole, with everything the script ran, and another command's line only in the share of its calls that clients sent. A MONITOR pass of %d cycles before the counted pass shows that share per command (MONITOR marks a call made by a script with `[0 lua]`). This is the cost that scripts and commands set, the one lean scripts lower. INFO cpu (used_cpu_user + used_cpu_sys, the Redis CPU of sections 2, 5 and 6) would add reading and writing the connection, event loop and server cron, about the same for every library per command sent, which hides the scripts' own cost.", monitorCycles)
	p("")
	p("| peer | p50 µs | p99 µs | allocs/op | Redis µs / cycle | floor (2 × PING p50) µs | p50 ÷ floor | script floor (2 × empty EVALSHA p50) µs | script floor ÷ floor | p50 ÷ best other library |")
	p("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, pr := range res.Opts.Peers {
		name := pr.Name()
		p("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |", name,
			fmtSpread(overReps(res.Reps, uncontendedMetric(name, func(u UncontendedResult, _ Rep) float64 { return micros(u.Cycle.P50) })), 0),
			fmtSpread(overReps(res.Reps, uncontendedMetric(name, func(u UncontendedResult, _ Rep) float64 { return micros(u.Cycle.P99) })), 0),
			fmtSpread(overReps(res.Reps, uncontendedMetric(name, func(u UncontendedResult, _ Rep) float64 { return u.AllocsPerOp })), 0),
			fmtSpread(overReps(res.Reps, uncontendedMetric(name, func(u UncontendedResult, _ Rep) float64 { return u.RedisMicros })), 1),
			fmtSpread(overReps(res.Reps, uncontendedMetric(name, func(u UncontendedResult, _ Rep) float64 { return floorMicros(u) })), 0),
			fmtSpread(overReps(res.Reps, uncontendedMetric(name, func(u UncontendedResult, r Rep) float64 { return ratio(micros(u.Cycle.P50), floorMicros(u)) })), 2),
			fmtSpread(overReps(res.Reps, uncontendedMetric(name, func(u UncontendedResult, _ Rep) float64 { return 2 * micros(u.EmptyScript.P50) })), 0),
			fmtSpread(overReps(res.Reps, uncontendedMetric(name, func(u UncontendedResult, _ Rep) float64 { return ratio(2*micros(u.EmptyScript.P50), floorMicros(u)) })), 2),
			fmtSpread(overReps(res.Reps, uncontendedMetric(name, func(u UncontendedResult, r Rep) float64 { return ratio(micros(u.Cycle.P50), bestPeerUncontended(r)) })), 2))
	}
	p("")
}

func writeHotKey(p func(string, ...any), res *Results, n int) {
	p("## 2. One hot key, %d goroutines in 2 processes", n)
	p("")
	p("Each goroutine takes the key, holds it %v, releases it and asks again, for %v per repetition (the first %d%% left out). Handoff: from a holder calling release to the lock going to a request that was already waiting at that moment (acquire returned); a releaser that asks again and barges in ahead of the waiters does not end the handoff. Next grant: from a release to the next grant to anyone, the releaser included, while a waiter was there (how long the lock sits idle in demand). Stamped with the wall clock both processes share. PING: round trips timed by the parent every 2 ms during the run, so under the same load of machine and server as the handoffs; the unit of the column p50 in PING RTTs. Commands sent: counted in the clients (a pipeline counts each command; Pub/Sub subscriptions counted on the server). Executed: INFO commandstats, which also counts what scripts run. Redis CPU: INFO cpu (user + sys) before and after, per grant.", res.Opts.Hold, res.Opts.HotDuration, contendedWarmupShare)
	p("")
	p("| peer | grants/s | PING p50 µs | handoff p50 µs | handoff p99 µs | p50 in PING RTTs | p50 ÷ best other library | next grant p50 µs | commands sent / grant | round trips / grant | executed / grant | Redis CPU µs / grant | executed mix per grant |")
	p("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, pr := range res.Opts.Peers {
		name := pr.Name()
		metric := func(f func(ContendedResult, Rep) float64) Spread {
			return overReps(res.Reps, contendedMetric(name, n, f))
		}
		mix := "—"
		if len(res.Reps) > 0 {
			if c, ok := findContended(res.Reps[len(res.Reps)/2], name, n); ok {
				mix = c.CommandMix
			}
		}
		p("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |", name,
			fmtSpread(metric(func(c ContendedResult, _ Rep) float64 { return c.Throughput }), 0),
			fmtSpread(metric(func(c ContendedResult, _ Rep) float64 { return micros(c.Ping.P50) }), 0),
			fmtSpread(metric(func(c ContendedResult, _ Rep) float64 { return handoffMicros(c, 50) }), 0),
			fmtSpread(metric(func(c ContendedResult, _ Rep) float64 { return handoffMicros(c, 99) }), 0),
			fmtSpread(metric(func(c ContendedResult, r Rep) float64 { return ratio(handoffMicros(c, 50), rttMicros(c)) }), 1),
			fmtSpread(metric(func(c ContendedResult, r Rep) float64 {
				return ratio(handoffMicros(c, 50), bestPeerHandoff(r, n, notLockgen))
			}), 2),
			fmtSpread(metric(func(c ContendedResult, _ Rep) float64 {
				if c.NextGrant.N == 0 {
					return math.NaN()
				}
				return micros(c.NextGrant.P50)
			}), 0),
			fmtSpread(metric(func(c ContendedResult, _ Rep) float64 { return c.CommandsPerGrant }), 2),
			fmtSpread(metric(func(c ContendedResult, _ Rep) float64 { return c.CallsPerGrant }), 2),
			fmtSpread(metric(func(c ContendedResult, _ Rep) float64 { return c.ExecutedPerGrant }), 2),
			fmtSpread(metric(func(c ContendedResult, _ Rep) float64 { return micros(c.ServerCPUPerGrant) }), 0),
			mix)
	}
	p("")
}

func writeProcesses(p func(string, ...any), res *Results) {
	o := res.Opts
	lo, _, _ := processRange(o)
	p("## 5. One hot key, %d goroutines in each of %s processes", o.ProcGoroutines, joinInts(o.Processes))
	p("")
	p("Workload 2 again, with the goroutines spread over more processes: %d in each, every one taking the key, holding it %v, releasing it and asking again, for %v per repetition (the first %d%% left out). Handoff, PING, executed and Redis CPU as in section 2. Executed ÷ at %d processes is taken inside each repetition. The polling libraries run only at their tuned settings here, the ones that compete on handoff.", o.ProcGoroutines, o.Hold, o.ProcDuration, contendedWarmupShare, lo)
	p("")
	p("| peer | processes | grants/s | PING p50 µs | handoff p50 µs | p50 in PING RTTs | p50 ÷ best other library | executed / grant | executed ÷ at %d processes | Redis CPU µs / grant | commands sent / grant | executed mix per grant | overlaps |", lo)
	p("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, pr := range o.ProcPeers {
		name := pr.Name()
		for _, procs := range o.Processes {
			metric := func(f func(ContendedResult, Rep) float64) Spread {
				return overReps(res.Reps, processesMetric(name, procs, f))
			}
			growth := "—"
			if procs != lo {
				growth = fmtSpread(overReps(res.Reps, func(r Rep) float64 { return executedGrowth(r, name, procs, lo) }), 2)
			}
			mix, overlaps := "—", "—"
			if len(res.Reps) > 0 {
				if c, ok := findProcesses(res.Reps[len(res.Reps)/2], name, procs); ok {
					mix = c.CommandMix
				}
			}
			if n, seen := processOverlaps(res.Reps, name, procs); seen {
				overlaps = fmt.Sprint(n)
			}
			p("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |", name, procs,
				fmtSpread(metric(func(c ContendedResult, _ Rep) float64 { return c.Throughput }), 0),
				fmtSpread(metric(func(c ContendedResult, _ Rep) float64 { return micros(c.Ping.P50) }), 0),
				fmtSpread(metric(func(c ContendedResult, _ Rep) float64 { return handoffMicros(c, 50) }), 0),
				fmtSpread(metric(func(c ContendedResult, _ Rep) float64 { return ratio(handoffMicros(c, 50), rttMicros(c)) }), 1),
				fmtSpread(metric(func(c ContendedResult, r Rep) float64 {
					return ratio(handoffMicros(c, 50), bestHandoff(r.Processes, func(other ContendedResult) bool {
						return other.Procs == procs && notLockgen(other.Peer)
					}))
				}), 2),
				fmtSpread(metric(func(c ContendedResult, _ Rep) float64 { return c.ExecutedPerGrant }), 2),
				growth,
				fmtSpread(metric(func(c ContendedResult, _ Rep) float64 { return micros(c.ServerCPUPerGrant) }), 0),
				fmtSpread(metric(func(c ContendedResult, _ Rep) float64 { return c.CommandsPerGrant }), 2),
				mix, overlaps)
		}
	}
	p("")
}

// processOverlaps sums the overlaps of peer's workload-5 runs at procs
// processes; seen is false when none of them gave a grant.
func processOverlaps(reps []Rep, peer string, procs int) (n int, seen bool) {
	for _, r := range reps {
		if c, ok := findProcesses(r, peer, procs); ok {
			n += c.Overlaps
			seen = true
		}
	}
	return n, seen
}

func joinInts(xs []int) string {
	var parts []string
	for _, x := range xs {
		parts = append(parts, fmt.Sprint(x))
	}
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

func handoffMicros(c ContendedResult, pct int) float64 {
	if c.Handoff.N == 0 {
		return math.NaN()
	}
	if pct == 99 {
		return micros(c.Handoff.P99)
	}
	return micros(c.Handoff.P50)
}

func writeFairness(p func(string, ...any), res *Results) {
	p("## 3. Fairness under the same contention")
	p("")
	p("Waiting time is from asking to getting the lock. Out of order: share of grants given while a request that arrived earlier was still waiting. Unserved: requests still waiting when the run ended (summed over repetitions). Overlaps (must be 0): grants that began before the previous holder released.")
	p("")
	p("| peer | goroutines | wait p50 ms | wait p99 ms | wait max ms | out of order | unserved | overlaps |")
	p("| --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, n := range res.Opts.Goroutines {
		for _, pr := range res.Opts.Peers {
			name := pr.Name()
			metric := func(f func(ContendedResult, Rep) float64) Spread {
				return overReps(res.Reps, contendedMetric(name, n, f))
			}
			unserved, overlaps, seen := 0, 0, false
			for _, r := range res.Reps {
				if c, ok := findContended(r, name, n); ok {
					unserved += c.Unserved
					overlaps += c.Overlaps
					seen = true
				}
			}
			counts := []string{"—", "—"}
			if seen {
				counts = []string{fmt.Sprint(unserved), fmt.Sprint(overlaps)}
			}
			p("| %s | %d | %s | %s | %s | %s | %s | %s |", name, n,
				fmtSpread(metric(func(c ContendedResult, _ Rep) float64 { return ms(c.Wait.P50) }), 2),
				fmtSpread(metric(func(c ContendedResult, _ Rep) float64 { return ms(c.Wait.P99) }), 1),
				fmtSpread(metric(func(c ContendedResult, _ Rep) float64 { return ms(c.Wait.Max) }), 0),
				fmtPercent(metric(func(c ContendedResult, _ Rep) float64 { return c.OutOfOrder })),
				counts[0], counts[1])
		}
	}
	p("")
}

func writeHeld(p func(string, ...any), res *Results) {
	o := res.Opts
	p("## 4. %d locks held at once", o.HeldLocks)
	p("")
	p("%d locks with a lease of %v are taken, then held for %v while the harness counts. Libraries with a watchdog renew on their own; for the others each lock gets the goroutine a user would write, extending every lease/3. Round trips as the client issues them (a pipeline counts once). The ideal for a watchdog is one pipeline per node per lease/3: %.1f round trips/s and %.0f commands/s here.", o.HeldLocks, o.HeldLease, o.HeldWindow, idealRenewCalls(o), float64(o.HeldLocks)*idealRenewCalls(o))
	p("")
	p("| peer | renewal | goroutines added | round trips/s | commands sent/s | executed/s | locks lost |")
	p("| --- | --- | --- | --- | --- | --- | --- |")
	for _, pr := range o.HeldPeers {
		name := pr.Name()
		metric := func(f func(HeldManyResult) float64) Spread { return overReps(res.Reps, heldMetric(name, f)) }
		renewalText := "—"
		for _, r := range res.Reps {
			if h, ok := findHeld(r, name); ok {
				renewalText = h.Renewal
			}
		}
		p("| %s | %s | %s | %s | %s | %s | %s |", name, renewalText,
			fmtSpread(metric(func(h HeldManyResult) float64 { return float64(h.Goroutines) }), 0),
			fmtSpread(metric(func(h HeldManyResult) float64 { return h.CallsPerSec }), 1),
			fmtSpread(metric(func(h HeldManyResult) float64 { return h.CommandsPerSec }), 0),
			fmtSpread(metric(func(h HeldManyResult) float64 { return h.ExecutedPerSec }), 0),
			fmtSpread(metric(func(h HeldManyResult) float64 { return float64(h.Lost) }), 0))
	}
	p("")
}

// writeErrors lists what failed, so that a "—" in a table has a reason.
func writeErrors(p func(string, ...any), res *Results) {
	seen := map[string]bool{}
	var lines []string
	note := func(where, err string) {
		if err == "" {
			return
		}
		line := fmt.Sprintf("- %s: %s", where, strings.ReplaceAll(err, "\n", " "))
		if !seen[line] {
			seen[line] = true
			lines = append(lines, line)
		}
	}
	for _, r := range res.Reps {
		for _, u := range r.Uncontended {
			note(u.Peer+" (uncontended)", u.Err)
		}
		for _, c := range r.Contended {
			if c.Err != "" {
				note(fmt.Sprintf("%s (hot key, %d goroutines, %d errors)", c.Peer, c.Goroutines, c.Errors), c.Err)
			}
		}
		for _, h := range r.Held {
			note(h.Peer+" (locks held)", h.Err)
		}
		for _, m := range r.ManyKeys {
			if m.Err != "" {
				note(fmt.Sprintf("%s (many keys, %d goroutines, %d errors)", m.Peer, m.Goroutines, m.Errors), m.Err)
			}
		}
		for _, h := range r.Memory {
			note(h.Peer+" (memory per held lock)", h.Err)
		}
		for _, w := range r.Idle {
			if w.Err != "" {
				note(fmt.Sprintf("%s (idle waiters, %s, %d errors)", w.Row, idleShape(w.Waiters, w.Procs), w.Errors), w.Err)
			}
		}
		for _, c := range r.Processes {
			if c.Err != "" {
				note(fmt.Sprintf("%s (hot key, %d processes × %d goroutines, %d errors)", c.Peer, c.Procs, c.Goroutines/max(c.Procs, 1), c.Errors), c.Err)
			}
		}
	}
	if len(lines) == 0 {
		return
	}
	p("## Errors during the run")
	p("")
	for _, l := range lines {
		p("%s", l)
	}
	p("")
}

// repsText says how many repetitions each workload ran: "3 (workloads 1
// to 5 and 7), 5 (6), 2 (8)", leaving out the workloads this run skipped.
func repsText(o Options) string {
	var parts []string
	if o.UncontendedIters > 0 || len(o.Goroutines) > 0 || len(o.HeldPeers) > 0 || len(o.Processes) > 0 || o.MemoryLocks > 0 {
		parts = append(parts, fmt.Sprintf("%d for workloads 1 to 5 and 7", o.Reps))
	}
	if len(o.ManyGoroutines) > 0 && len(o.ManyPeers) > 0 {
		parts = append(parts, fmt.Sprintf("%d for workload 6", o.repsOf("manykeys")))
	}
	if o.IdleWaiters > 0 && len(o.IdleRows) > 0 && len(o.IdleProcs) > 0 {
		parts = append(parts, fmt.Sprintf("%d for workload 8", o.repsOf("idlewaiters")))
	}
	if len(parts) == 0 {
		return "none ran"
	}
	return strings.Join(parts, ", ")
}

func waiting(p peers.Peer) string {
	if p.Polls {
		return "poll"
	}
	return "woken by Redis"
}

func renewal(p peers.Peer) string {
	if p.AutoRenew {
		return "watchdog"
	}
	return "none (user code)"
}

// fmtSpread prints "median [min–max]" with the given decimals, the range
// only when there are several repetitions, and "—" when nothing was
// measured.
func fmtSpread(s Spread, decimals int) string {
	if math.IsNaN(s.Median) {
		return "—"
	}
	f := func(v float64) string { return fmt.Sprintf("%.*f", decimals, v) }
	if s.N <= 1 {
		return f(s.Median)
	}
	return fmt.Sprintf("%s [%s–%s]", f(s.Median), f(s.Min), f(s.Max))
}

func fmtPercent(s Spread) string {
	if math.IsNaN(s.Median) {
		return "—"
	}
	return fmtSpread(Spread{Median: 100 * s.Median, Min: 100 * s.Min, Max: 100 * s.Max, N: s.N}, 1) + " %"
}

func unitSuffix(u string, missing bool) string {
	if missing {
		return ""
	}
	switch u {
	case "", "/s":
		return ""
	}
	return " " + u
}
