package harness

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockgen/lockgen/bench/internal/serverprobe"
	"github.com/lockgen/lockgen/bench/peers"
)

// ManyKeysResult is workload 6 for one peer and goroutine count: every
// goroutine locks a random key of a large space, runs one INCR through the
// library's client, and releases, over and over. Almost every lock is free:
// this is the one-lock-per-order case, where the cost per cycle (CPU of
// client and server, round trips) sets the throughput, not the handoff.
type ManyKeysResult struct {
	Peer       string
	Goroutines int
	Cycles     int
	Throughput float64 // cycles per second
	Cycle      Latency // Lock + Incr + Unlock
	// Per cycle: CPU time of redis-server (INFO cpu) and of this process
	// (getrusage), and commands Redis executed (INFO commandstats, scripts'
	// redis.call included), all in µs or counts per cycle.
	RedisCPU  float64
	ClientCPU float64
	Executed  float64
	Errors    int
	Err       string
}

// manyKeysSpace builds the workload's key names once, so that formatting
// them is not charged to any library's client CPU.
type manyKeysSpace struct{ locks, counters []string }

func newManyKeysSpace(n int) manyKeysSpace {
	s := manyKeysSpace{locks: make([]string, n), counters: make([]string, n)}
	for i := range n {
		s.locks[i] = fmt.Sprintf("mk:%d", i)
		s.counters[i] = fmt.Sprintf("mk:%d:n", i)
	}
	return s
}

// manyKeysWarmUp is how many cycles each goroutine runs before the clock
// starts: connections dialled, scripts cached, pools grown.
const manyKeysWarmUp = 3

// manyKeysGrace bounds the warm-up, and how long the cycles still running
// at the end of a run may take. A lock that never comes back (a waiter
// whose wake-up was lost) must not stall the whole benchmark.
const manyKeysGrace = 5 * time.Second

func runManyKeys(ctx context.Context, addr string, rdb *redis.Client, p peers.Peer, g int, space manyKeysSpace, d time.Duration) ManyKeysResult {
	res := ManyKeysResult{Peer: p.Name(), Goroutines: g}
	if err := resetServer(ctx, rdb); err != nil {
		res.Err = err.Error()
		return res
	}
	c, err := p.Open(peers.Config{Addr: addr})
	if err != nil {
		res.Err = err.Error()
		return res
	}
	defer c.Close()
	warmCtx, cancelWarm := context.WithTimeout(ctx, manyKeysGrace)
	defer cancelWarm()
	if _, errs, err := manyKeysRound(warmCtx, c, g, space, time.Time{}, manyKeysWarmUp); err != nil {
		res.Err = fmt.Sprintf("warm-up (%d errors): %v", errs, err)
		return res
	}
	if err := rdb.ConfigResetStat(ctx).Err(); err != nil {
		res.Err = err.Error()
		return res
	}
	cpu0, err := serverprobe.CPU(ctx, rdb)
	if err != nil {
		res.Err = err.Error()
		return res
	}
	own0 := processCPU()
	t0 := time.Now()
	// A cycle still running manyKeysGrace after the deadline is given up:
	// its time counts against the library, its error is reported.
	runCtx, cancel := context.WithDeadline(ctx, t0.Add(d+manyKeysGrace))
	defer cancel()
	sample, errs, err := manyKeysRound(runCtx, c, g, space, t0.Add(d), 0)
	elapsed := time.Since(t0)
	own1 := processCPU()
	cpu1, cerr := serverprobe.CPU(ctx, rdb)
	stats, serr := readCommandStats(ctx, rdb)
	res.Errors = errs
	if err = errors.Join(err, cerr, serr); err != nil {
		res.Err = err.Error()
	}
	res.Cycles = len(sample)
	if res.Cycles == 0 {
		return res
	}
	n := float64(res.Cycles)
	res.Throughput = n / elapsed.Seconds()
	res.Cycle = summarize(sample)
	res.RedisCPU = (cpu1 - cpu0) * 1e6 / n
	res.ClientCPU = micros(own1-own0) / n
	res.Executed = float64(stats.total()) / n
	return res
}

// manyKeysRound runs g goroutines of cycles on random keys, each until
// deadline or, with a zero deadline, for count cycles. It returns every
// cycle's duration, the number of failed cycles and the first error.
func manyKeysRound(ctx context.Context, c peers.Client, g int, space manyKeysSpace, deadline time.Time, count int) ([]time.Duration, int, error) {
	var (
		mu       sync.Mutex
		all      []time.Duration
		failures int
		first    error
		wg       sync.WaitGroup
	)
	for w := range g {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
			var mine []time.Duration
			var failed int
			var firstErr error
			for i := 0; (deadline.IsZero() && i < count) || (!deadline.IsZero() && time.Now().Before(deadline)); i++ {
				k := rng.IntN(len(space.locks))
				t := time.Now()
				if err := cycleOnce(ctx, c, space.locks[k], space.counters[k]); err != nil {
					failed++
					if firstErr == nil {
						firstErr = err
					}
					if ctx.Err() != nil {
						break
					}
					continue
				}
				mine = append(mine, time.Since(t))
			}
			mu.Lock()
			all = append(all, mine...)
			failures += failed
			if first == nil {
				first = firstErr
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	return all, failures, first
}

// cycleOnce is the critical section of the workload: lock, INCR, unlock.
func cycleOnce(ctx context.Context, c peers.Client, lock, counter string) error {
	h, err := c.Lock(ctx, lock)
	if err != nil {
		return err
	}
	ierr := c.Incr(ctx, counter)
	return errors.Join(ierr, h.Unlock(ctx))
}
