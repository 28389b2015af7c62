package harness

import (
	"context"
	"fmt"
	goruntime "runtime"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockgen/lockgen/bench/peers"
)

// HeldManyResult is workload 4 for one peer: Locks locks held at once for
// Window, with leases of Lease kept alive by the library's watchdog or, for
// libraries without one, by a renewal goroutine per lock.
type HeldManyResult struct {
	Peer    string
	Locks   int
	Lease   time.Duration
	Window  time.Duration
	Renewal string // "watchdog" or "goroutine per lock (user code)"

	Goroutines     int     // goroutines added while the locks are held
	CallsPerSec    float64 // round trips sent by the client while holding
	CommandsPerSec float64 // commands sent by the client while holding
	ExecutedPerSec float64 // commands Redis executed while holding
	Lost           int     // locks no longer held at release time
	Err            string
}

// heldAcquirers is how many goroutines take the locks before the window.
const heldAcquirers = 32

func runHeldMany(ctx context.Context, addr string, rdb *redis.Client, p peers.Peer, locks int, lease, window time.Duration) HeldManyResult {
	res := HeldManyResult{Peer: p.Name(), Locks: locks, Lease: lease, Window: window, Renewal: "watchdog"}
	if !p.AutoRenew {
		res.Renewal = "goroutine per lock (user code)"
	}
	if err := resetServer(ctx, rdb); err != nil {
		res.Err = err.Error()
		return res
	}
	baseGoroutines := goruntime.NumGoroutine()
	c, err := p.Open(peers.Config{Addr: addr, Lease: lease, ManualRenew: true})
	if err != nil {
		res.Err = err.Error()
		return res
	}
	defer c.Close()

	// Every lock's context lives until release: rueidislock ends a lock
	// when its context ends.
	holdCtx, cancelHold := context.WithTimeout(ctx, window+2*time.Minute)
	defer cancelHold()
	held := make([]peers.Held, locks)
	errs := make([]error, locks)
	forEach(locks, func(i int) {
		held[i], errs[i] = c.Lock(holdCtx, fmt.Sprintf("many:%d", i))
	})
	for i, err := range errs {
		if err != nil {
			res.Err = fmt.Sprintf("lock %d: %v", i, err)
			releaseAll(held)
			return res
		}
	}
	if err := rdb.ConfigResetStat(ctx).Err(); err != nil {
		res.Err = err.Error()
		releaseAll(held)
		return res
	}
	before := c.Counts()
	t0 := time.Now()
	time.Sleep(window)
	elapsed := time.Since(t0).Seconds()
	after := c.Counts()
	res.Goroutines = goruntime.NumGoroutine() - baseGoroutines
	stats, err := readCommandStats(ctx, rdb)
	if err != nil {
		res.Err = err.Error()
	}
	res.CallsPerSec = float64(after.Calls-before.Calls) / elapsed
	res.CommandsPerSec = float64(after.Commands-before.Commands) / elapsed
	res.ExecutedPerSec = float64(stats.total()) / elapsed
	res.Lost = releaseAll(held)
	return res
}

// releaseAll unlocks every held lock and counts those that failed (lost).
func releaseAll(held []peers.Held) int {
	var mu sync.Mutex
	lost := 0
	forEach(len(held), func(i int) {
		if held[i] == nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
		defer cancel()
		if err := held[i].Unlock(ctx); err != nil {
			mu.Lock()
			lost++
			mu.Unlock()
		}
	})
	return lost
}

// forEach runs f(0..n-1) on heldAcquirers goroutines.
func forEach(n int, f func(i int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < heldAcquirers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
}
