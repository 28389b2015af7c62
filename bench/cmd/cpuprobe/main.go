// Command cpuprobe breaks the Redis CPU of the many-keys cycle down: per
// peer and goroutine count, INFO cpu per cycle, INFO commandstats calls and
// usec per cycle for each command, and how many commands each read() of the
// server carried (INFO stats total_commands_processed / total_reads_processed).
// It talks to a redis-server the caller started (-addr) or, by default, one it starts
// on a free loopback port.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockgen/lockgen/bench/internal/serverprobe"
	"github.com/lockgen/lockgen/bench/peers"
)

func main() {
	addr := serverprobe.AddrFlag()
	names := flag.String("peers", "lockgen/mutex,redislock/autopipeline", "peers")
	gs := flag.String("g", "64,256", "goroutine counts")
	d := flag.Duration("d", 1500*time.Millisecond, "measured time per run")
	reps := flag.Int("reps", 1, "repetitions")
	flag.Parse()
	ctx := context.Background()
	*addr = serverprobe.Start(*addr)
	defer serverprobe.Stop()
	rdb := redis.NewClient(&redis.Options{Addr: *addr, PoolSize: 2})
	defer rdb.Close()
	for r := 0; r < *reps; r++ {
		for _, gstr := range strings.Split(*gs, ",") {
			g, _ := strconv.Atoi(gstr)
			for _, name := range strings.Split(*names, ",") {
				p, ok := peers.ByName(name)
				if !ok {
					serverprobe.Fatalf("no peer %q", name)
				}
				if err := probe(ctx, rdb, *addr, p, g, *d); err != nil {
					fmt.Fprintf(os.Stderr, "%s g=%d: %v\n", name, g, err)
				}
			}
		}
	}
}

// info reads an INFO section; a server that does not answer ends the probe.
func info(ctx context.Context, rdb *redis.Client, section string) map[string]string {
	m, err := serverprobe.Info(ctx, rdb, section)
	if err != nil {
		serverprobe.Fatalf("%v", err)
	}
	return m
}

func cpu(ctx context.Context, rdb *redis.Client) float64 {
	s, err := serverprobe.CPU(ctx, rdb)
	if err != nil {
		serverprobe.Fatalf("%v", err)
	}
	return s
}

func field(v, name string) float64 {
	for _, kv := range strings.Split(v, ",") {
		if x, ok := strings.CutPrefix(kv, name+"="); ok {
			f, _ := strconv.ParseFloat(x, 64)
			return f
		}
	}
	return 0
}

func probe(ctx context.Context, rdb *redis.Client, addr string, p peers.Peer, g int, d time.Duration) error {
	if err := rdb.FlushAll(ctx).Err(); err != nil {
		return err
	}
	c, err := p.Open(peers.Config{Addr: addr})
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := round(ctx, c, g, time.Now().Add(200*time.Millisecond)); err != nil {
		return err
	}
	rdb.ConfigResetStat(ctx)
	cpu0 := cpu(ctx, rdb)
	n, err := round(ctx, c, g, time.Now().Add(d))
	cpu1 := cpu(ctx, rdb)
	stats := info(ctx, rdb, "stats")
	cmds := info(ctx, rdb, "commandstats")
	if err != nil {
		return err
	}
	fn := float64(n)
	reads := serverprobe.Num(stats, "total_reads_processed")
	// INFO itself: two INFO calls and a reset made reads of their own.
	processed := serverprobe.Num(stats, "total_commands_processed")
	fmt.Printf("%-28s g=%-3d cycles=%-7d redisCPU=%5.2f us/cycle  cmds/read=%5.2f reads/cycle=%4.2f writes/cycle=%4.2f\n",
		p.Name(), g, n, (cpu1-cpu0)*1e6/fn, processed/reads, reads/fn, serverprobe.Num(stats, "total_writes_processed")/fn)
	var keys []string
	for k := range cmds {
		if strings.HasPrefix(k, "cmdstat_") && !strings.Contains(k, "info") && !strings.Contains(k, "config") {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := cmds[k]
		fmt.Printf("    %-22s calls/cycle=%5.2f usec/call=%5.2f usec/cycle=%5.2f\n", strings.TrimPrefix(k, "cmdstat_"),
			field(v, "calls")/fn, field(v, "usec_per_call"), field(v, "usec")/fn)
	}
	return nil
}

func round(ctx context.Context, c peers.Client, g int, deadline time.Time) (int, error) {
	var mu sync.Mutex
	var total int
	var first error
	var wg sync.WaitGroup
	for w := range g {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
			n := 0
			var ferr error
			for time.Now().Before(deadline) {
				k := rng.IntN(100000)
				lock, counter := "mk:"+strconv.Itoa(k), "mk:"+strconv.Itoa(k)+":n"
				h, err := c.Lock(ctx, lock)
				if err == nil {
					err = errors.Join(c.Incr(ctx, counter), h.Unlock(ctx))
				}
				if err != nil {
					ferr = err
					break
				}
				n++
			}
			mu.Lock()
			total += n
			if first == nil {
				first = ferr
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	return total, first
}
