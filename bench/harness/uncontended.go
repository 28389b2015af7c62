package harness

import (
	"context"
	"errors"
	"fmt"
	goruntime "runtime"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockgen/lockgen/bench/peers"
)

// UncontendedResult is workload 1 for one peer: one goroutine takes and
// gives back a free lock, over and over.
type UncontendedResult struct {
	Peer  string
	Cycle Latency // one Lock + Unlock
	// Ping: PINGs interleaved with the cycles on another go-redis
	// connection, so that the floor (2 × Ping.P50) is taken under the same
	// machine load as the cycles it is compared with.
	Ping Latency
	// EmptyScript: an EVALSHA of "return 1" on the PING connection, timed
	// after each PING. Two of them are the floor of any lock whose acquire
	// and release are one script call each: what Redis charges for running
	// a script at all, before the script does anything.
	EmptyScript Latency
	AllocsPerOp float64 // heap allocations per cycle in the whole process
	// RedisMicros: the time Redis spent executing the commands of a cycle
	// (INFO commandstats usec, each command once: see directMicros), in
	// the allocation pass, which sends no PINGs.
	RedisMicros float64
	Unavailable bool // the peer cannot run in this build
	Err         string
}

// uncontendedTimeout bounds one peer's whole uncontended run.
const uncontendedTimeout = 2 * time.Minute

// monitorCycles is how many cycles the MONITOR pass watches to learn which
// commands of a cycle scripts run: the same in every cycle of a free lock.
const monitorCycles = 20

func runUncontended(ctx context.Context, addr string, rdb *redis.Client, p peers.Peer, n int) UncontendedResult {
	res := UncontendedResult{Peer: p.Name()}
	c, err := p.Open(peers.Config{Addr: addr})
	if err != nil {
		res.Unavailable = errors.Is(err, peers.ErrUnavailable)
		res.Err = err.Error()
		return res
	}
	defer c.Close()
	key := "uncontended"
	// One deadline bounds the whole run; a context per cycle would add the
	// harness's own allocations to every library's count.
	lctx, cancel := context.WithTimeout(ctx, uncontendedTimeout)
	defer cancel()
	cycle := func() error {
		h, err := c.Lock(lctx, key)
		if err != nil {
			return err
		}
		return h.Unlock(lctx)
	}
	// Warm up: connections, script caches, client-side caching.
	for i := 0; i < max(10, n/10); i++ {
		if err := cycle(); err != nil {
			res.Err = fmt.Sprintf("warm-up: %v", err)
			return res
		}
	}
	res.AllocsPerOp, res.RedisMicros, err = quietPass(lctx, addr, rdb, cycle, n)
	if err != nil {
		res.Err = err.Error()
		return res
	}

	if err := timedPass(lctx, addr, key, cycle, n, &res); err != nil {
		res.Err = err.Error()
	}
	return res
}

// timedPass times n cycles, each followed by a PING and an empty script
// on a connection of the harness's own, so that the floors are measured
// under the same load as the cycles, and stores the three summaries in
// res.
func timedPass(lctx context.Context, addr, key string, cycle func() error, n int, res *UncontendedResult) error {
	pinger := redis.NewClient(&redis.Options{Addr: addr})
	defer pinger.Close()
	if err := pinger.Ping(lctx).Err(); err != nil {
		return fmt.Errorf("ping: %v", err)
	}
	empty := redis.NewScript("return 1")
	if err := empty.Load(lctx, pinger).Err(); err != nil {
		return fmt.Errorf("script load: %v", err)
	}
	sample := make([]time.Duration, 0, n)
	pings := make([]time.Duration, 0, n)
	scripts := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		t0 := time.Now()
		if err := cycle(); err != nil {
			return err
		}
		t1 := time.Now()
		if err := pinger.Ping(lctx).Err(); err != nil {
			return fmt.Errorf("ping: %v", err)
		}
		t2 := time.Now()
		if err := empty.EvalSha(lctx, pinger, []string{key}).Err(); err != nil {
			return fmt.Errorf("empty script: %v", err)
		}
		sample = append(sample, t1.Sub(t0))
		pings = append(pings, t2.Sub(t1))
		scripts = append(scripts, time.Since(t2))
	}
	res.Cycle = summarize(sample)
	res.Ping = summarize(pings)
	res.EmptyScript = summarize(scripts)
	return nil
}

// quietPass runs n cycles with nothing else going on: what a cycle
// allocates (the interleaved PINGs of the timed pass allocate too) and the
// Redis time it takes (PINGs cost Redis time). A short MONITOR pass first
// tells which of a cycle's commands its scripts run (see directMicros);
// MONITOR is off again when the counting starts.
func quietPass(ctx context.Context, addr string, rdb *redis.Client, cycle func() error, n int) (allocsPerOp, redisMicros float64, err error) {
	origins, err := watchCallOrigins(ctx, addr, rdb, func() error {
		for i := 0; i < monitorCycles; i++ {
			if err := cycle(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("monitor pass: %w", err)
	}
	if err := rdb.ConfigResetStat(ctx).Err(); err != nil {
		return 0, 0, fmt.Errorf("reset stats: %w", err)
	}
	var before, after goruntime.MemStats
	goruntime.ReadMemStats(&before)
	for i := 0; i < n; i++ {
		if err := cycle(); err != nil {
			return 0, 0, err
		}
	}
	goruntime.ReadMemStats(&after)
	info, err := rdb.Info(ctx, "commandstats").Result()
	if err != nil {
		return 0, 0, fmt.Errorf("commandstats: %w", err)
	}
	allocsPerOp = float64(after.Mallocs-before.Mallocs) / float64(n)
	return allocsPerOp, directMicros(parseCommandField(info, "usec"), origins) / float64(n), nil
}
