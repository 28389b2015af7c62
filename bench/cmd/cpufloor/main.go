// Command cpufloor measures what one command costs redis-server's CPU
// (INFO cpu user + sys, per command) when clients pipeline it in batches:
// a plain SET NX PX, EVALSHA of an empty script, of a one-SET script, and
// of lockgen's mutex acquire and release, so that the floor of a
// script-based lock cycle is known. It talks to a redis-server the caller
// started (-addr) or, by default, one it starts
// on a free loopback port.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/lockgen/lockgen/lua"

	"github.com/lockgen/lockgen/bench/internal/serverprobe"
)

type variant struct {
	name  string
	setup string // each key's value before the clock starts; "" leaves it absent
	add   func(p redis.Pipeliner, key string)
}

func script(rdb *redis.Client, src string) string {
	sha, err := rdb.ScriptLoad(context.Background(), src).Result()
	if err != nil {
		serverprobe.Fatalf("%v", err)
	}
	return sha
}

// fileVariants measure a script file in the shape of mutex_acquire's
// call (3 KEYS, 4 ARGV) on a tombstone and on an absent key: for trying a
// change of the script before it is made.
func fileVariants(rdb *redis.Client, path string) []variant {
	src, err := os.ReadFile(path)
	if err != nil {
		serverprobe.Fatalf("%v", err)
	}
	sha := script(rdb, string(src))
	k3 := func(key string) []string { return []string{key, key + ":waiters", key + ":wake"} }
	call := func(p redis.Pipeliner, k string) {
		p.EvalSha(context.Background(), sha, k3(k), "h1", "10000", "PUBLISH", "1")
	}
	return []variant{{path + ", tombstone", "! 5 -", call}, {path + ", absent key", "", call}}
}

func variants(rdb *redis.Client) []variant {
	empty := script(rdb, "return 1")
	oneSet := script(rdb, "return redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2])")
	getSet := script(rdb, "local v = redis.call('GET', KEYS[1]) redis.call('SET', KEYS[1], ARGV[1] .. ' 5 -', 'PX', ARGV[2]) return 5")
	acq := script(rdb, lua.MutexAcquire.Source)
	rel := script(rdb, lua.MutexRelease.Source)
	k3 := func(key string) []string { return []string{key, key + ":waiters", key + ":wake"} }
	tomb, held := "! 5 -", "h1 5 -"
	return []variant{
		{"SET NX PX", "", func(p redis.Pipeliner, k string) { p.SetNX(context.Background(), k, "h1", 10e9) }},
		{"EVALSHA return 1, 0 keys", "", func(p redis.Pipeliner, k string) { p.EvalSha(context.Background(), empty, nil) }},
		{"EVALSHA return 1, 3 keys 4 args", "", func(p redis.Pipeliner, k string) {
			p.EvalSha(context.Background(), empty, k3(k), "h1", "10000", "PUBLISH", "1")
		}},
		{"EVALSHA return 1, 1 key 2 args", "", func(p redis.Pipeliner, k string) {
			p.EvalSha(context.Background(), empty, []string{k}, "h1", "10000")
		}},
		{"EVALSHA return 1, 3 keys 0 args", "", func(p redis.Pipeliner, k string) {
			p.EvalSha(context.Background(), empty, k3(k))
		}},
		{"EVALSHA SET NX PX (redislock-like)", "", func(p redis.Pipeliner, k string) {
			p.EvalSha(context.Background(), oneSet, []string{k}, "h1", "10000")
		}},
		{"EVALSHA GET+SET PX, no checks", tomb, func(p redis.Pipeliner, k string) {
			p.EvalSha(context.Background(), getSet, []string{k}, "h1", "10000")
		}},
		{"EVALSHA mutex_acquire, tombstone", tomb, func(p redis.Pipeliner, k string) {
			p.EvalSha(context.Background(), acq, k3(k), "h1", "10000", "PUBLISH", "1")
		}},
		{"EVALSHA mutex_acquire, absent key", "", func(p redis.Pipeliner, k string) {
			p.EvalSha(context.Background(), acq, k3(k), "h1", "10000", "PUBLISH", "1")
		}},
		{"EVALSHA mutex_release, guess right", held, func(p redis.Pipeliner, k string) {
			p.EvalSha(context.Background(), rel, k3(k), "h1", "10000", "PUBLISH", "5")
		}},
	}
}

func cpu(ctx context.Context, rdb *redis.Client) float64 {
	s, err := serverprobe.CPU(ctx, rdb)
	if err != nil {
		serverprobe.Fatalf("%v", err)
	}
	return s
}

func main() {
	addr := serverprobe.AddrFlag()
	n := flag.Int("n", 100000, "commands per variant")
	batches := flag.String("batch", "1,16,64", "pipeline batch sizes")
	reps := flag.Int("reps", 3, "repetitions")
	files := flag.String("script", "", "comma-separated script files to measure instead (lua.MutexAcquire's prelude constants must be in the file)")
	cyc := flag.Bool("cycle", false, "measure whole cycles (acquire, INCR, release) instead")
	flag.Parse()
	ctx := context.Background()
	*addr = serverprobe.Start(*addr)
	defer serverprobe.Stop()
	rdb := redis.NewClient(&redis.Options{Addr: *addr, PoolSize: 4})
	defer rdb.Close()
	for _, bs := range strings.Split(*batches, ",") {
		b, _ := strconv.Atoi(bs)
		if *cyc {
			for _, c := range cycles(rdb) {
				var out []string
				for r := 0; r < *reps; r++ {
					us, err := runCycle(ctx, rdb, c, b, *n)
					if err != nil {
						serverprobe.Fatalf("%v", err)
					}
					out = append(out, fmt.Sprintf("%5.2f", us))
				}
				fmt.Printf("batch %-3d %-66s us/cycle: %s\n", b, c.name, strings.Join(out, " "))
			}
			continue
		}
		vs := variants(rdb)
		if *files != "" {
			vs = nil
			for _, f := range strings.Split(*files, ",") {
				vs = append(vs, fileVariants(rdb, f)...)
			}
		}
		// Repetitions go round the variants, so that a change of the
		// machine's load falls on all of them alike.
		out := make([][]string, len(vs))
		for r := 0; r < *reps; r++ {
			for i, v := range vs {
				out[i] = append(out[i], fmt.Sprintf("%5.2f", run(ctx, rdb, v, b, *n)))
			}
		}
		for i, v := range vs {
			fmt.Printf("batch %-3d %-36s us/command: %s\n", b, v.name, strings.Join(out[i], " "))
		}
	}
}

// run sends n commands of v in pipelines of b on fresh keys and returns
// redis-server's CPU per command in µs.
func run(ctx context.Context, rdb *redis.Client, v variant, b, n int) float64 {
	rdb.FlushAll(ctx)
	keys := make([]string, n)
	for i := range keys {
		keys[i] = "fl:" + strconv.Itoa(i)
	}
	if v.setup != "" {
		for i := 0; i < n; i += 1000 {
			p := rdb.Pipeline()
			for _, k := range keys[i:min(i+1000, n)] {
				p.Set(ctx, k, v.setup, 0)
			}
			p.Exec(ctx)
		}
	}
	c0 := cpu(ctx, rdb)
	for i := 0; i < n; i += b {
		p := rdb.Pipeline()
		for _, k := range keys[i:min(i+b, n)] {
			v.add(p, k)
		}
		if _, err := p.Exec(ctx); err != nil && err != redis.Nil {
			serverprobe.Fatalf("%s: %v", v.name, err)
		}
	}
	return (cpu(ctx, rdb) - c0) * 1e6 / float64(n)
}
