package gopherlua_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockgen/lockgen/lua"
)

// fcallVariant is one way of running mutex_acquire and mutex_release on
// the server, for BenchmarkFunctionVsEvalsha.
type fcallVariant struct {
	name string
	cmd  string // its commandstats name
	call func(ctx context.Context, rdb *redis.Client, release bool, keys []string, args ...any) error
}

// BenchmarkFunctionVsEvalsha compares EVALSHA with FCALL (Redis Functions,
// Redis 7) on the uncontended mutex cycle, for lua/doc.go's "Why not Redis
// Functions". Each b.N is one round in which every variant takes cpuBatch
// locks and gives them back; each reports the median over the rounds of
//
//	<variant>-redis-µs/acquire, /release  Redis CPU per call (commandstats)
//	<variant>-wall-µs/cycle               acquire + release seen by this client
//
// Variants: evalsha (the scripts as shipped); fcall (the same Source as a
// function body: the helpers are still made on every call); fcall-hoisted
// (helpers made once when the library loads, the body per call: what a
// library would look like).
//
//	go test ./gopherlua_test/ -run '^$' -bench FunctionVsEvalsha -benchtime 200x
func BenchmarkFunctionVsEvalsha(b *testing.B) {
	rdb := mutexCycleServer(b)
	ctx := context.Background()
	if err := rdb.FunctionLoad(ctx, wrappedLibrary()).Err(); err != nil {
		b.Fatalf("FUNCTION LOAD (wrapped): %v", err)
	}
	for _, s := range []*lua.Script{lua.MutexAcquire, lua.MutexRelease} {
		if err := rdb.FunctionLoad(ctx, hoistedLibrary(s)).Err(); err != nil {
			b.Fatalf("FUNCTION LOAD (hoisted %s): %v", s.Name, err)
		}
	}
	scripts := [2]*lua.Script{lua.MutexAcquire, lua.MutexRelease}
	variants := []fcallVariant{
		{"evalsha", "evalsha", func(ctx context.Context, rdb *redis.Client, release bool, keys []string, args ...any) error {
			return rdb.EvalSha(ctx, scripts[btoi(release)].SHA1, keys, args...).Err()
		}},
		{"fcall", "fcall", func(ctx context.Context, rdb *redis.Client, release bool, keys []string, args ...any) error {
			return rdb.FCall(ctx, "w_"+scripts[btoi(release)].Name, keys, args...).Err()
		}},
		{"fcall-hoisted", "fcall", func(ctx context.Context, rdb *redis.Client, release bool, keys []string, args ...any) error {
			return rdb.FCall(ctx, "h_"+scripts[btoi(release)].Name, keys, args...).Err()
		}},
	}
	keys := make([][]string, cpuBatch)
	for i := range keys {
		base := "lockgen:mutex:{fn" + strconv.Itoa(i) + "}"
		keys[i] = []string{base, base + ":waiters", base + ":wake"}
	}
	cpu := make([][2][]float64, len(variants))
	wall := make([][]float64, len(variants))
	b.ResetTimer()
	for round := 0; round < b.N; round++ {
		for v, vr := range variants {
			var cycle time.Duration
			for phase, release := range []bool{false, true} {
				calls0, usec0 := commandStats(b, rdb, vr.cmd)
				start := time.Now()
				for _, k := range keys {
					args := []any{"A", "30000", "PUBLISH", "500"}
					if release {
						args = args[:3]
					}
					if err := vr.call(ctx, rdb, release, k, args...); err != nil {
						b.Fatalf("%s: %v", vr.name, err)
					}
				}
				cycle += time.Since(start)
				calls1, usec1 := commandStats(b, rdb, vr.cmd)
				cpu[v][phase] = append(cpu[v][phase], float64(usec1-usec0)/float64(calls1-calls0))
			}
			wall[v] = append(wall[v], float64(cycle.Microseconds())/cpuBatch)
		}
	}
	b.StopTimer()
	for v, vr := range variants {
		b.ReportMetric(median(cpu[v][0]), vr.name+"-redis-µs/acquire")
		b.ReportMetric(median(cpu[v][1]), vr.name+"-redis-µs/release")
		b.ReportMetric(median(wall[v]), vr.name+"-wall-µs/cycle")
	}
}

// wrappedLibrary registers w_<name> for mutex_acquire and mutex_release,
// each running the script's whole Source per call.
func wrappedLibrary() string {
	var lib strings.Builder
	lib.WriteString("#!lua name=lgbench_wrapped\n")
	for _, s := range []*lua.Script{lua.MutexAcquire, lua.MutexRelease} {
		lib.WriteString("redis.register_function('w_" + s.Name + "', function(KEYS, ARGV)\n")
		lib.WriteString(s.Source)
		lib.WriteString("\nend)\n")
	}
	return lib.String()
}

// hoistedLibrary registers h_<name>: s's helpers are made once, at load,
// and read KEYS and ARGV from upvalues the function sets on each call.
func hoistedLibrary(s *lua.Script) string {
	helpers := strings.TrimSuffix(s.Source, s.Body())
	return "#!lua name=lgbench_hoisted_" + s.Name + "\nlocal KEYS, ARGV\n" + helpers +
		"\nredis.register_function('h_" + s.Name + "', function(keys, args)\nKEYS, ARGV = keys, args\n" +
		s.Body() + "\nend)\n"
}

func btoi(v bool) int {
	if v {
		return 1
	}
	return 0
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
