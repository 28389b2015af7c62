package harness

import (
	"bufio"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockgen/lockgen/bench/peers"
)

// HeldMemoryResult is what Locks held locks of one peer cost in Redis
// memory: the keys they make, MEMORY USAGE summed over every key, and the
// growth of used_memory while they are held (which also counts the
// server's bookkeeping: expiry entries, dictionary growth).
type HeldMemoryResult struct {
	Peer         string
	Locks        int
	KeysPerLock  float64
	UsagePerLock float64 // bytes, MEMORY USAGE summed over all keys ÷ Locks
	UsedPerLock  float64 // bytes, used_memory while held − before ÷ Locks
	Err          string
}

// memoryLease: long enough that no renewal runs while the memory is read.
const memoryLease = 60 * time.Second

// memoryTimeout bounds taking and holding the locks of workload 7.
const memoryTimeout = 45 * time.Second

// memoryKeys matches every key a library makes for the locks of workload
// 7: each one's name contains the lock's own key, "mem:<n>".
const memoryKeys = "*mem:*"

func runHeldMemory(ctx context.Context, addr string, rdb *redis.Client, p peers.Peer, locks int) HeldMemoryResult {
	res := HeldMemoryResult{Peer: p.Name(), Locks: locks}
	fail := func(err error) HeldMemoryResult { res.Err = err.Error(); return res }
	if err := resetServer(ctx, rdb); err != nil {
		return fail(err)
	}
	c, err := p.Open(peers.Config{Addr: addr, Lease: memoryLease})
	if err != nil {
		return fail(err)
	}
	defer c.Close()
	// Every lock's context lives until release (rueidislock ends a lock
	// when its context ends); a library that cannot take them in time
	// fails this workload instead of stalling the run.
	holdCtx, cancelHold := context.WithTimeout(ctx, memoryTimeout)
	defer cancelHold()
	// Grow the client's connections to what taking the locks will use, so
	// that their buffers are in the baseline, not in the locks' share.
	// Their keys ("warm:…") are left out of the sums below.
	held := make([]peers.Held, heldAcquirers*2)
	errs := make([]error, len(held))
	forEach(len(held), func(i int) { held[i], errs[i] = c.Lock(holdCtx, fmt.Sprintf("warm:%d", i)) })
	releaseAll(held)
	for _, err := range errs {
		if err != nil {
			return fail(fmt.Errorf("warm-up: %w", err))
		}
	}
	before, err := usedMemory(ctx, rdb)
	if err != nil {
		return fail(err)
	}
	held = make([]peers.Held, locks)
	errs = make([]error, locks)
	forEach(locks, func(i int) { held[i], errs[i] = c.Lock(holdCtx, fmt.Sprintf("mem:%d", i)) })
	defer releaseAll(held)
	for i, err := range errs {
		if err != nil {
			return fail(fmt.Errorf("lock %d: %w", i, err))
		}
	}
	after, err := usedMemory(ctx, rdb)
	if err != nil {
		return fail(err)
	}
	keys, bytes, err := memoryOfKeys(ctx, rdb)
	if err != nil {
		return fail(err)
	}
	n := float64(locks)
	res.KeysPerLock = float64(keys) / n
	res.UsagePerLock = float64(bytes) / n
	res.UsedPerLock = float64(after-before) / n
	return res
}

// usedMemory is INFO memory's used_memory, in bytes.
func usedMemory(ctx context.Context, rdb *redis.Client) (int64, error) {
	info, err := rdb.Info(ctx, "memory").Result()
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(strings.NewReader(info))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "used_memory:"); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("INFO memory has no used_memory")
}

// memoryOfKeys scans the keyspace for the keys matching memoryKeys and sums
// their MEMORY USAGE (SAMPLES 0: exact for nested values too), in
// pipelines.
func memoryOfKeys(ctx context.Context, rdb *redis.Client) (keys, bytes int64, err error) {
	var cursor uint64
	for {
		var batch []string
		batch, cursor, err = rdb.Scan(ctx, cursor, memoryKeys, 1000).Result()
		if err != nil {
			return 0, 0, err
		}
		cmds, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, k := range batch {
				p.MemoryUsage(ctx, k, 0)
			}
			return nil
		})
		if err != nil && err != redis.Nil {
			return 0, 0, err
		}
		for _, cmd := range cmds {
			if v, err := cmd.(*redis.IntCmd).Result(); err == nil {
				keys++
				bytes += v
			}
		}
		if cursor == 0 {
			return keys, bytes, nil
		}
	}
}
