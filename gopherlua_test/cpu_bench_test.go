package gopherlua_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/lockgen/lockgen/lua"
	"github.com/lockgen/lockgen/redistest"
)

// cpuBatch is how many locks one round of BenchmarkScriptCPU takes before it
// gives them back: the acquires and the releases are timed by Redis in
// separate phases, so each gets its own number.
const cpuBatch = 64

// BenchmarkScriptCPU reports the Redis CPU time of the uncontended mutex
// and fair paths as Redis itself measures it (INFO commandstats, usec of
// EVALSHA), which is what the scripts cost the server whatever the network
// and the client do:
//
//	redis-µs/acquire  the acquire script on a free lock (a tombstone from
//	                  the round before, after the first round)
//	redis-µs/release  the release of the only hold, nobody waiting (the
//	                  mutex's with the fence of its grant, as the runtime
//	                  sends it)
//	redis-µs/empty    a script that only returns, the floor of any EVALSHA
//
// Run it with
//
//	go test ./gopherlua_test/ -run '^$' -bench ScriptCPU -benchtime 20000x
//
// ns/op is the wall time of one acquire+release pair from this process and
// includes two round trips.
func BenchmarkScriptCPU(b *testing.B) {
	for _, c := range []scriptCycle{
		{"mutex", lua.MutexAcquire, lua.MutexRelease, []string{"", ":waiters", ":wake"}, []any{"A", "30000", "PUBLISH", "500"}, true},
		{"fair", lua.FairAcquire, lua.FairRelease, []string{"", ":queue", ":alive", ":wake"}, []any{"A", "30000", "PUBLISH"}, false},
	} {
		b.Run(c.kind, func(b *testing.B) { benchmarkScriptCycle(b, c) })
	}
}

// scriptCycle is one kind's uncontended cycle: its two scripts, the
// suffixes of its KEYS after the lock's own key, the acquire's ARGV, and
// whether the release also sends the fence of the grant.
type scriptCycle struct {
	kind             string
	acquire, release *lua.Script
	suffixes         []string
	args             []any
	releaseFence     bool
}

func benchmarkScriptCycle(b *testing.B, c scriptCycle) {
	rdb := redistest.Start(b).Client(b)
	ctx := context.Background()
	empty, err := rdb.ScriptLoad(ctx, "return 0").Result()
	if err != nil {
		b.Fatal(err)
	}
	for _, s := range []*lua.Script{c.acquire, c.release} {
		if err := rdb.ScriptLoad(ctx, s.Source).Err(); err != nil {
			b.Fatalf("SCRIPT LOAD %s: %v", s.Name, err)
		}
	}
	keys := make([][]string, cpuBatch)
	for i := range keys {
		base := "lockgen:" + c.kind + ":{cpu" + strconv.Itoa(i) + "}"
		for _, suffix := range c.suffixes {
			keys[i] = append(keys[i], base+suffix)
		}
	}
	eval := func(sha string, keys []string, args ...any) any {
		v, err := rdb.EvalSha(ctx, sha, keys, args...).Result()
		if err != nil {
			b.Fatalf("EVALSHA: %v", err)
		}
		return v
	}
	releaseArgs := make([][]any, cpuBatch)
	var acquire, release, floor evalshaTime
	b.ResetTimer()
	for done := 0; done < b.N; {
		n := min(cpuBatch, b.N-done)
		acquire.phase(b, rdb, func() {
			for i := 0; i < n; i++ {
				fence := eval(c.acquire.SHA1, keys[i], c.args...).(int64)
				releaseArgs[i] = c.args[:3:3]
				if c.releaseFence {
					releaseArgs[i] = append(releaseArgs[i], strconv.FormatInt(fence, 10))
				}
			}
		})
		release.phase(b, rdb, func() {
			for i := 0; i < n; i++ {
				if r := eval(c.release.SHA1, keys[i], releaseArgs[i]...); r != int64(1) {
					b.Fatalf("%s: %v, want 1", c.release.Name, r)
				}
			}
		})
		b.StopTimer()
		floor.phase(b, rdb, func() {
			for i := 0; i < n; i++ {
				eval(empty, nil)
			}
		})
		b.StartTimer()
		done += n
	}
	b.StopTimer()
	b.ReportMetric(acquire.perCall(), "redis-µs/acquire")
	b.ReportMetric(release.perCall(), "redis-µs/release")
	b.ReportMetric(floor.perCall(), "redis-µs/empty")
}

// evalshaTime accumulates the EVALSHA calls and CPU time Redis counted
// during the phases given to phase.
type evalshaTime struct {
	calls, usec int64
}

func (e *evalshaTime) phase(b *testing.B, rdb *redis.Client, run func()) {
	b.StopTimer()
	calls0, usec0 := commandStats(b, rdb, "evalsha")
	b.StartTimer()
	run()
	b.StopTimer()
	calls1, usec1 := commandStats(b, rdb, "evalsha")
	b.StartTimer()
	e.calls += calls1 - calls0
	e.usec += usec1 - usec0
}

func (e *evalshaTime) perCall() float64 {
	if e.calls == 0 {
		return 0
	}
	return float64(e.usec) / float64(e.calls)
}

// commandStats reads the cumulative calls and usec of one command (lower
// case, as INFO names it) from INFO commandstats.
func commandStats(tb testing.TB, rdb *redis.Client, cmd string) (calls, usec int64) {
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		tb.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_"+cmd+":")
		if !ok {
			continue
		}
		for _, field := range strings.Split(rest, ",") {
			name, value, _ := strings.Cut(field, "=")
			var err error
			switch name {
			case "calls":
				calls, err = strconv.ParseInt(value, 10, 64)
			case "usec":
				usec, err = strconv.ParseInt(value, 10, 64)
			}
			if err != nil {
				tb.Fatalf("commandstats line %q: %v", line, err)
			}
		}
		return calls, usec
	}
	return 0, 0 // not called yet
}

// mutexCycleServer starts a redis-server for a benchmark of the mutex cycle
// with mutex_acquire and mutex_release loaded, so that EVALSHA finds them.
func mutexCycleServer(b *testing.B) *redis.Client {
	rdb := redistest.Start(b).Client(b)
	for _, s := range []*lua.Script{lua.MutexAcquire, lua.MutexRelease} {
		if err := rdb.ScriptLoad(context.Background(), s.Source).Err(); err != nil {
			b.Fatalf("SCRIPT LOAD %s: %v", s.Name, err)
		}
	}
	return rdb
}
