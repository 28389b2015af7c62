package luashim

import (
	"strings"
	"testing"
)

const shimPrefix = "ERR lockgen-shim: "

func TestStrictnessViolations(t *testing.T) {
	cases := []struct {
		name string
		src  string
		keys []string
		want string // substring of the message after the prefix
	}{
		{"undeclared key", "return redis.call('get', 'other')", []string{"k"}, `get touches "other", which is not in KEYS`},
		{"undeclared second key of DEL", "return redis.call('del', KEYS[1], 'other')", []string{"k"}, `del touches "other"`},
		{"undeclared channel", "return redis.call('publish', 'chan', 'x')", []string{"k"}, `publish touches "chan"`},
		{"cross-slot keys", "return 1", []string{"{a}x", "{b}x"}, "KEYS hash to different cluster slots"},
		{"forbidden command", "return redis.call('keys', '*')", nil, "command KEYS is not allowed"},
		{"command no lock script calls", "return redis.call('incr', KEYS[1])", []string{"k"}, "command INCR is not allowed"},
		{"global read", "return undefined_thing", nil, "Script attempted to access nonexistent global variable 'undefined_thing'"},
		{"global write", "counter = 1", nil, "Script attempted to create or modify global variable 'counter'"},
		{"overwrite builtin", "tonumber = nil", nil, "Script attempted to create or modify global variable 'tonumber'"},
		{"modify library", "string.rep = nil", nil, "Attempt to modify a readonly table"},
		{"modify redis table", "redis.call = nil", nil, "Attempt to modify a readonly table"},
		{"forbidden library", "return os.time()", nil, "nonexistent global variable 'os'"},
		{"no loadstring", "return loadstring('return 1')", nil, "nonexistent global variable 'loadstring'"},
		{"no print", "print('x')", nil, "nonexistent global variable 'print'"},
		{"violation caught by pcall still fails", "pcall(redis.call, 'get', 'other') return 1", []string{"k"}, `get touches "other"`},
		{"global read caught by pcall still fails", "pcall(function() return nope end) return 1", nil, "variable 'nope'"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, _ := newTestServer(t)
			got, err := s.Eval(c.src, c.keys)
			if err == nil {
				t.Fatalf("got reply %#v, want a violation", got)
			}
			if !strings.HasPrefix(err.Error(), shimPrefix) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q, want prefix %q containing %q", err, shimPrefix, c.want)
			}
		})
	}
}

func TestStrictnessAllowsDeclaredAccess(t *testing.T) {
	s, _ := newTestServer(t)
	keys := []string{"lockgen:mutex:{order:42}", "lockgen:mutex:{order:42}:wake"}
	src := "local x = 1\n" +
		"redis.call('set', KEYS[1], ARGV[1])\n" +
		"redis.call('publish', KEYS[2], 'n:1')\n" +
		"return {redis.call('get', KEYS[1]), string.upper('ok'), tostring(x), table.concat({'a', 'b'}), math.max(1, 2)}"
	got, err := s.Eval(src, keys, "holder")
	if err != nil {
		t.Fatal(err)
	}
	want := []any{"holder", "OK", "1", "ab", int64(2)}
	if len(got.([]any)) != len(want) {
		t.Fatalf("got %#v, want %#v", got, want)
	}
	for i := range want {
		if got.([]any)[i] != want[i] {
			t.Errorf("element %d: got %#v, want %#v", i, got.([]any)[i], want[i])
		}
	}
}

func TestDoSkipsKeyCheckButNotAllowList(t *testing.T) {
	s, _ := newTestServer(t)
	if _, err := s.Do("SET", "anything", "v"); err != nil {
		t.Errorf("Do SET: %v", err)
	}
	_, err := s.Do("INCR", "anything")
	if err == nil || !strings.HasPrefix(err.Error(), shimPrefix+"command INCR is not allowed") {
		t.Errorf("Do INCR: %v, want a not-allowed error", err)
	}
	_, err = s.Do("CONFIG", "SET", "x", "y")
	if err == nil || !strings.HasPrefix(err.Error(), shimPrefix+"command CONFIG is not allowed") {
		t.Errorf("Do CONFIG: %v, want a not-allowed error", err)
	}
}

func TestGlobalsDoNotLeakBetweenRuns(t *testing.T) {
	s, _ := newTestServer(t)
	if _, err := s.Eval("return 1", []string{"a"}, "x"); err != nil {
		t.Fatal(err)
	}
	got, err := s.Eval("return {#KEYS, #ARGV}", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.([]any)[0] != int64(0) || got.([]any)[1] != int64(0) {
		t.Errorf("KEYS/ARGV of a previous run visible: %#v", got)
	}
}
