package luashim

import "testing"

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
