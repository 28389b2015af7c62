package luashim

import (
	goruntime "runtime"
	"testing"
)

// benchAcquire is shaped like a mutex acquire: read the clock, check the
// owner, set a hash field and a TTL.
const benchAcquire = `local now = redis.call('time')
local owner = redis.call('hget', KEYS[1], 'owner')
if owner and owner ~= ARGV[1] then
  return {0, redis.call('pttl', KEYS[1])}
end
redis.call('hset', KEYS[1], 'owner', ARGV[1])
redis.call('hsetnx', KEYS[1], 'since', now[1])
redis.call('pexpire', KEYS[1], ARGV[2])
return {1, tonumber(now[1])}
`

// BenchmarkEvalSha measures one small script call, the unit of cost of the
// embedded backend.
func BenchmarkEvalSha(b *testing.B) {
	s := New(RealClock{})
	sha, err := s.Load("bench_acquire", benchAcquire)
	if err != nil {
		b.Fatal(err)
	}
	keys := []string{"lockgen:mutex:{bench}"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.EvalSha(sha, keys, "holder-1", "30000"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEvalShaTrivial is the fixed cost of a script call.
func BenchmarkEvalShaTrivial(b *testing.B) {
	s := New(RealClock{})
	sha, err := s.Load("", "return 1")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.EvalSha(sha, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDo is one plain command.
func BenchmarkDo(b *testing.B) {
	s := New(RealClock{})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Do("HSET", "h", "f", "v"); err != nil {
			b.Fatal(err)
		}
	}
}

// TestRunBuildsNoArgTable: a chunk that does not use `...` must not get
// gopher-lua's Lua 5.0 `arg` table, which would be built on every run,
// about 2.7 KB each (compileScript clears the flag). The embedded backend
// pays for every run, and a trivial script costs well under a kilobyte
// without it.
func TestRunBuildsNoArgTable(t *testing.T) {
	s, _ := newTestServer(t)
	sha, err := s.Load("trivial", "return 1")
	if err != nil {
		t.Fatal(err)
	}
	const runs = 200
	var before, after goruntime.MemStats
	goruntime.ReadMemStats(&before)
	for range runs {
		if _, err := s.EvalSha(sha, nil); err != nil {
			t.Fatal(err)
		}
	}
	goruntime.ReadMemStats(&after)
	if perRun := (after.TotalAlloc - before.TotalAlloc) / runs; perRun > 2048 {
		t.Errorf("a run of `return 1` allocates %d bytes, want under 2048: the arg table is back", perRun)
	}
}
