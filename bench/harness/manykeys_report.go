package harness

import (
	"fmt"
	"math"
	"slices"
)

// Workloads 6 and 7 in the report: their tables, and the targets they
// check. Throughput ratios are taken inside one repetition, like every
// other ratio of the report.

func findManyKeys(r Rep, peer string, g int) (ManyKeysResult, bool) {
	for _, m := range r.ManyKeys {
		if m.Peer == peer && m.Goroutines == g && m.Cycles > 0 {
			return m, true
		}
	}
	return ManyKeysResult{}, false
}

func manyKeysMetric(peer string, g int, f func(ManyKeysResult) float64) func(Rep) float64 {
	return func(r Rep) float64 {
		m, ok := findManyKeys(r, peer, g)
		if !ok {
			return math.NaN()
		}
		return f(m)
	}
}

func memoryMetric(peer string, f func(HeldMemoryResult) float64) func(Rep) float64 {
	return func(r Rep) float64 {
		for _, h := range r.Memory {
			if h.Peer == peer && h.Err == "" {
				return f(h)
			}
		}
		return math.NaN()
	}
}

// isShippedMutexBackend: lockgen's mutex on a backend users can pick, the
// go-redis one (the default) or the rueidis module. lockgen/mutex-
// autopipeline is measured to evaluate go-redis's AutoPipeline but is not
// shipped (a queued command no longer honours its context, which the
// runtime's bounds rely on), so it is not a candidate for "best backend".
func isShippedMutexBackend(peer string) bool {
	return peer == "lockgen/mutex" || peer == "lockgen/mutex-rueidis"
}

// bestManyKeys is the peer with the highest throughput at g among those
// keep accepts, in repetition r, and that throughput ("" and NaN if none).
func bestManyKeys(r Rep, g int, keep func(string) bool) (string, float64) {
	best, name := math.NaN(), ""
	for _, m := range r.ManyKeys {
		if m.Goroutines == g && m.Cycles > 0 && keep(m.Peer) && (math.IsNaN(best) || m.Throughput > best) {
			best, name = m.Throughput, m.Peer
		}
	}
	return name, best
}

// lowestManyKeys is the lowest value of f at g among the peers keep accepts
// in repetition r (NaN if none): the best of them on a cost like Redis CPU
// per cycle.
func lowestManyKeys(r Rep, g int, keep func(string) bool, f func(ManyKeysResult) float64) float64 {
	best := math.NaN()
	for _, m := range r.ManyKeys {
		if m.Goroutines != g || m.Cycles == 0 || !keep(m.Peer) {
			continue
		}
		if v := f(m); !math.IsNaN(v) && (math.IsNaN(best) || v < best) {
			best = v
		}
	}
	return best
}

func redisCPUPerCycle(m ManyKeysResult) float64 { return m.RedisCPU }

// manyKeysCPUTargets: at g goroutines, the Redis CPU per cycle (INFO cpu)
// of the shipped lockgen/mutex backend that costs Redis least against the
// other library that costs it least, and of the default backend against
// redislock/default. Each side's best is its lowest CPU per cycle, in the
// same repetition.
func manyKeysCPUTargets(res *Results, g int) []Target {
	limit := func(v float64) bool { return v <= maxManyKeysCPURatio }
	limitText := fmt.Sprintf("≤ %.1f", maxManyKeysCPURatio)
	return []Target{
		newTarget("lockgen/mutex, best backend", fmt.Sprintf("many keys, %d goroutines: Redis CPU per cycle of the shipped lockgen/mutex backend lowest on it ÷ the lowest other library's", g), limitText, "×",
			overReps(res.Reps, func(r Rep) float64 {
				return ratio(lowestManyKeys(r, g, isShippedMutexBackend, redisCPUPerCycle), lowestManyKeys(r, g, notLockgen, redisCPUPerCycle))
			}), limit),
		newTarget("lockgen/mutex", fmt.Sprintf("many keys, %d goroutines: Redis CPU per cycle on the default backend (go-redis) ÷ redislock/default's", g), limitText, "×",
			overReps(res.Reps, func(r Rep) float64 {
				return ratio(manyKeysMetric("lockgen/mutex", g, redisCPUPerCycle)(r), manyKeysMetric("redislock/default", g, redisCPUPerCycle)(r))
			}), limit),
	}
}

// maxManyKeysCPURatio: on many keys, lockgen may not cost Redis more CPU
// per cycle than the library it is compared with.
const maxManyKeysCPURatio = 1.0

// manyKeysTargets: at 64 goroutines and more, lockgen's mutex on its best
// backend against the best other library, and on its default backend
// against redislock on the default go-redis client, in throughput and in
// Redis CPU per cycle; at 1 goroutine, the
// latency the best backend (at the most goroutines) costs against the
// default; and the memory a held mutex takes against redislock's.
func manyKeysTargets(res *Results) []Target {
	o := res.Opts
	var out []Target
	add := func(peer, what, limit, unit string, s Spread, pass func(float64) bool) {
		out = append(out, newTarget(peer, what, limit, unit, s, pass))
	}
	if len(o.ManyGoroutines) > 0 && len(o.ManyPeers) > 0 {
		for _, g := range o.ManyGoroutines {
			if g < 64 {
				continue
			}
			add("lockgen/mutex, best backend", fmt.Sprintf("many keys, %d goroutines: cycles/s of the best shipped lockgen/mutex backend ÷ the best other library's", g), "≥ 1.0", "×",
				overReps(res.Reps, func(r Rep) float64 {
					_, mine := bestManyKeys(r, g, isShippedMutexBackend)
					_, theirs := bestManyKeys(r, g, notLockgen)
					return ratio(mine, theirs)
				}), func(v float64) bool { return v >= 1.0 })
			add("lockgen/mutex", fmt.Sprintf("many keys, %d goroutines: cycles/s on the default backend (go-redis) ÷ redislock/default's", g), "≥ 1.0", "×",
				overReps(res.Reps, func(r Rep) float64 {
					mine := manyKeysMetric("lockgen/mutex", g, func(m ManyKeysResult) float64 { return m.Throughput })(r)
					theirs := manyKeysMetric("redislock/default", g, func(m ManyKeysResult) float64 { return m.Throughput })(r)
					return ratio(mine, theirs)
				}), func(v float64) bool { return v >= 1.0 })
			out = append(out, manyKeysCPUTargets(res, g)...)
		}
		if most := slices.Max(o.ManyGoroutines); slices.Contains(o.ManyGoroutines, 1) && most > 1 {
			add("lockgen/mutex, best backend", fmt.Sprintf("many keys, 1 goroutine: cycle p50 of the shipped backend best at %d goroutines ÷ the default backend's", most), "≤ 1.1", "×",
				overReps(res.Reps, func(r Rep) float64 {
					best, _ := bestManyKeys(r, most, isShippedMutexBackend)
					p50 := func(peer string) float64 {
						return manyKeysMetric(peer, 1, func(m ManyKeysResult) float64 { return micros(m.Cycle.P50) })(r)
					}
					return ratio(p50(best), p50("lockgen/mutex"))
				}), func(v float64) bool { return v <= 1.1 })
		}
	}
	return append(out, memoryTargets(res)...)
}

// memoryTargets are the limits on Redis memory per held lock: default ids
// name the host and the process (Inspect, `lockgen locks` and busy errors
// show them) and are worth their bytes up to 1.4 ×; short ids set through
// WithHolderIDs come within 1.1 ×.
func memoryTargets(res *Results) []Target {
	o := res.Opts
	if o.MemoryLocks == 0 {
		return nil
	}
	var out []Target
	limits := map[string]float64{"lockgen/mutex": 1.4, "lockgen/mutex-shortids": 1.1, "lockgen/fair": 1.4}
	for _, lp := range []string{"lockgen/mutex", "lockgen/mutex-shortids", "lockgen/fair"} {
		if !hasPeer(o.MemoryPeers, lp) {
			continue
		}
		limit := limits[lp]
		ids := ""
		if lp == "lockgen/mutex-shortids" {
			ids = ", short holder ids (WithHolderIDs)"
		}
		t := newTarget(lp, fmt.Sprintf("Redis memory per held lock (MEMORY USAGE, %d held%s) ÷ redislock/default's", o.MemoryLocks, ids), fmt.Sprintf("≤ %.1f", limit), "×",
			overReps(res.Reps, func(r Rep) float64 {
				usage := func(h HeldMemoryResult) float64 { return h.UsagePerLock }
				return ratio(memoryMetric(lp, usage)(r), memoryMetric("redislock/default", usage)(r))
			}), func(v float64) bool { return v <= limit })
		if lp == "lockgen/fair" {
			t = limitOnlyForMutex(t)
		}
		out = append(out, t)
	}
	return out
}

func writeManyKeys(p func(string, ...any), res *Results) {
	o := res.Opts
	p("## 6. Many keys: G goroutines, a random key of %d each time", o.ManyKeys)
	p("")
	p("In one process, each of G goroutines takes the lock of a random key out of %d, runs one INCR through the library's own client (so that a pipelining client pipelines it with the lock's calls), and releases, for %v per repetition after %d warm-up cycles each. Almost every lock is free: the cost per cycle sets the throughput. Redis CPU: INFO cpu (user + sys) per cycle; client CPU: getrusage of the whole process (harness included, the same for every peer) per cycle; executed: INFO commandstats per cycle, scripts' redis.call included. Every client has go-redis's pool of 64 connections or rueidis's defaults. This machine is shared: throughput moves with the load of the moment, ratios inside one repetition less so.", o.ManyKeys, o.ManyDuration, manyKeysWarmUp)
	p("")
	p("| peer | goroutines | cycles/s | p50 µs | p99 µs | ÷ best other library, cycles/s | Redis CPU µs / cycle | client CPU µs / cycle | executed / cycle |")
	p("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, g := range o.ManyGoroutines {
		for _, pr := range o.ManyPeers {
			name := pr.Name()
			metric := func(f func(ManyKeysResult) float64, decimals int) string {
				return fmtSpread(overReps(res.Reps, manyKeysMetric(name, g, f)), decimals)
			}
			p("| %s | %d | %s | %s | %s | %s | %s | %s | %s |", name, g,
				metric(func(m ManyKeysResult) float64 { return m.Throughput }, 0),
				metric(func(m ManyKeysResult) float64 { return micros(m.Cycle.P50) }, 0),
				metric(func(m ManyKeysResult) float64 { return micros(m.Cycle.P99) }, 0),
				fmtSpread(overReps(res.Reps, func(r Rep) float64 {
					_, best := bestManyKeys(r, g, func(peer string) bool { return notLockgen(peer) && peer != name })
					return ratio(manyKeysMetric(name, g, func(m ManyKeysResult) float64 { return m.Throughput })(r), best)
				}), 2),
				metric(func(m ManyKeysResult) float64 { return m.RedisCPU }, 1),
				metric(func(m ManyKeysResult) float64 { return m.ClientCPU }, 1),
				metric(func(m ManyKeysResult) float64 { return m.Executed }, 2))
		}
	}
	p("")
}

func writeMemory(p func(string, ...any), res *Results) {
	o := res.Opts
	p("## 7. Redis memory per held lock")
	p("")
	p("%d locks on distinct keys are taken (lease 60s, so that no renewal runs meanwhile) and held while the harness reads the server: MEMORY USAGE (SAMPLES 0) of every key the library made for them (every key whose name contains the lock's key), summed, and INFO memory's used_memory against its value just before (after the client's connections were opened and grown by taking and releasing a few locks first), both per lock. used_memory also counts the server's own bookkeeping of the keys (expiry entries, hash table growth).", o.MemoryLocks)
	p("")
	p("| peer | keys per lock | MEMORY USAGE B / lock | used_memory B / lock |")
	p("| --- | --- | --- | --- |")
	for _, pr := range o.MemoryPeers {
		name := pr.Name()
		metric := func(f func(HeldMemoryResult) float64, decimals int) string {
			return fmtSpread(overReps(res.Reps, memoryMetric(name, f)), decimals)
		}
		p("| %s | %s | %s | %s |", name,
			metric(func(h HeldMemoryResult) float64 { return h.KeysPerLock }, 2),
			metric(func(h HeldMemoryResult) float64 { return h.UsagePerLock }, 0),
			metric(func(h HeldMemoryResult) float64 { return h.UsedPerLock }, 0))
	}
	p("")
}
