package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/lockgen/lockgen/lua"
)

// A cycle of the many-keys workload on fresh keys, pipelined in batches of
// b keys: one pipeline of acquires and INCRs, then one of releases (which
// need what the acquires replied). lockgen's scripts as shipped, the same
// calls with no logic (the floor of the fenced design), and redislock's
// shape (SET NX PX in a script; compare-and-delete in a script).
type cycle struct {
	name             string
	acquire, release func(p redis.Pipeliner, key string, reply any) redis.Cmder
}

const bareAcquire = `local v = redis.call('GET', KEYS[1])
local n = redis.call('ZCARD', KEYS[2])
local t = redis.call('TIME')
redis.call('SET', KEYS[1], ARGV[1] .. ' 5 -', 'PX', 20000)
return 5`

const bareRelease = `return redis.call('SET', KEYS[1], '! ' .. ARGV[4] .. ' -', 'KEEPTTL', 'GET', 'XX')`

// bareGetSet is the least a fenced acquire can do: read the fence, write
// the next one. Without ZCARD (the waiters set may outlive the lock) and
// TIME (the fence base of a key that remembers none) it is not lockgen's
// design, only the floor of any fenced lock.
const bareGetSet = `local v = redis.call('GET', KEYS[1])
redis.call('SET', KEYS[1], ARGV[1] .. ' 5 -', 'PX', 20000)
return 5`

// bareRelease2 is bareRelease with 1 key and 2 ARGV (holder, fence).
const bareRelease2 = `return redis.call('SET', KEYS[1], '! ' .. ARGV[2] .. ' -', 'KEEPTTL', 'GET', 'XX')`

const redislockAcquire = `return redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2])`

const redislockRelease = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`

func cycles(rdb *redis.Client) []cycle {
	ctx := context.Background()
	k3 := func(key string) []string { return []string{key, key + ":waiters", key + ":wake"} }
	evalsha := func(src string, keys func(string) []string, args ...func(reply any) any) func(redis.Pipeliner, string, any) redis.Cmder {
		sha := script(rdb, src)
		return func(p redis.Pipeliner, k string, reply any) redis.Cmder {
			a := make([]any, len(args))
			for i, f := range args {
				a[i] = f(reply)
			}
			return p.EvalSha(ctx, sha, keys(k), a...)
		}
	}
	fixed := func(s string) func(any) any { return func(any) any { return s } }
	fence := func(r any) any { return fmt.Sprint(r) }
	one := func(k string) []string { return []string{k} }
	// ZCARD needs a second key name; the channel is not read.
	twoKeys := func(k string) []string { return []string{k, k + ":waiters"} }
	return []cycle{
		{"lockgen scripts", evalsha(lua.MutexAcquire.Source, k3, fixed("h1"), fixed("10000"), fixed("PUBLISH"), fixed("1")),
			evalsha(lua.MutexRelease.Source, k3, fixed("h1"), fixed("10000"), fixed("PUBLISH"), fence)},
		{"bare, 3 keys 4 args: GET ZCARD TIME SET; SET GET XX", evalsha(bareAcquire, k3, fixed("h1"), fixed("10000"), fixed("PUBLISH"), fixed("1")),
			evalsha(bareRelease, k3, fixed("h1"), fixed("10000"), fixed("PUBLISH"), fence)},
		{"bare, 1 key (2 for ZCARD), 1-2 args: GET ZCARD TIME SET; SET GET XX", evalsha(bareAcquire, twoKeys, fixed("h1")),
			evalsha(bareRelease2, one, fixed("h1"), fence)},
		{"bare, 1 key, 1-2 args: GET SET; SET GET XX", evalsha(bareGetSet, one, fixed("h1")),
			evalsha(bareRelease2, one, fixed("h1"), fence)},
		{"redislock shape", evalsha(redislockAcquire, one, fixed("tok"), fixed("10000")),
			evalsha(redislockRelease, one, fixed("tok"))},
	}
}

// runCycle returns redis-server's CPU per cycle in µs over n fresh keys.
func runCycle(ctx context.Context, rdb *redis.Client, c cycle, b, n int) (float64, error) {
	rdb.FlushAll(ctx)
	c0 := cpu(ctx, rdb)
	for i := 0; i < n; i += b {
		keys := make([]string, 0, b)
		for j := i; j < min(i+b, n); j++ {
			keys = append(keys, "fl:"+strconv.Itoa(j))
		}
		p := rdb.Pipeline()
		acq := make([]redis.Cmder, len(keys))
		for j, k := range keys {
			acq[j] = c.acquire(p, k, nil)
			p.Incr(ctx, k+":n")
		}
		if _, err := p.Exec(ctx); err != nil {
			return 0, fmt.Errorf("%s: %w", c.name, err)
		}
		p = rdb.Pipeline()
		for j, k := range keys {
			c.release(p, k, acq[j].(*redis.Cmd).Val())
		}
		if _, err := p.Exec(ctx); err != nil {
			return 0, fmt.Errorf("%s: %w", c.name, err)
		}
	}
	return (cpu(ctx, rdb) - c0) * 1e6 / float64(n), nil
}
