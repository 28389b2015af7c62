package harness

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/lockgen/lockgen/redistest"
)

func TestParseMonitorLine(t *testing.T) {
	cases := []struct {
		line       string
		name       string
		fromScript bool
		ok         bool
	}{
		{`1700000000.123456 [0 127.0.0.1:5555] "EVALSHA" "ab12" "1" "k"`, "evalsha", false, true},
		{`1700000000.123457 [0 lua] "set" "k" "v" "PX" "100"`, "set", true, true},
		{`1700000000.123458 [3 unix:/tmp/redis.sock] "get" "k"`, "get", false, true},
		{`1700000000.123459 [0 [::1]:5555] "del" "k"`, "del", false, true},
		{`OK`, "", false, false},
		{`1700000000.1 [0 lua] `, "", false, false},
		{`1700000000.1 [lua] "get"`, "", false, false},
	}
	for _, tc := range cases {
		name, fromScript, ok := parseMonitorLine(tc.line)
		if name != tc.name || fromScript != tc.fromScript || ok != tc.ok {
			t.Errorf("parseMonitorLine(%q) = %q, %v, %v; want %q, %v, %v", tc.line, name, fromScript, ok, tc.name, tc.fromScript, tc.ok)
		}
	}
}

// A script's usec counts whole, a command that scripts ran only in the
// share clients sent, one MONITOR never saw whole, the harness's own never.
func TestDirectMicros(t *testing.T) {
	usec := map[string]int64{"evalsha": 100, "set": 30, "get": 10, "del": 7, "client|setname": 4, "info": 50, "config|resetstat": 9}
	origins := callOrigins{
		"evalsha": {direct: 10},
		"set":     {direct: 5, fromScript: 5}, // half of 30 µs
		"get":     {fromScript: 10},           // none of it
		"client":  {direct: 1},
	}
	if got, want := directMicros(usec, origins), 100.0+15+0+7+4; math.Abs(got-want) > 1e-9 {
		t.Errorf("directMicros = %v, want %v", got, want)
	}
}

// On a real server, MONITOR tells the calls a script made from those a
// client sent, and INFO commandstats counts a script's calls under their
// own names as well as in the script's line: the double count directMicros
// leaves out.
func TestWatchCallOriginsOnRedis(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const script = "redis.call('set', KEYS[1], '1') return redis.call('get', KEYS[1])"
	if err := rdb.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	origins, err := watchCallOrigins(ctx, srv.Addr, rdb, func() error {
		for i := 0; i < 2; i++ {
			if err := rdb.Set(ctx, "direct", "x", 0).Err(); err != nil {
				return err
			}
		}
		for i := 0; i < 3; i++ {
			if err := rdb.Eval(ctx, script, []string{"k"}).Err(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]callOrigin{"set": {direct: 2, fromScript: 3}, "get": {fromScript: 3}, "eval": {direct: 3}}
	for name, w := range want {
		if c := origins[name]; c == nil || *c != w {
			t.Errorf("origins of %s = %+v, want %+v", name, c, w)
		}
	}
	if got := origins.directShare("set"); math.Abs(got-0.4) > 1e-9 {
		t.Errorf("direct share of set = %v, want 0.4", got)
	}
	stats, err := readCommandStats(ctx, rdb)
	if err != nil {
		t.Fatal(err)
	}
	if stats["set"] != 5 || stats["get"] != 3 || stats["eval"] != 3 {
		t.Errorf("commandstats calls %v; want set 5, get 3, eval 3 (a script's calls counted under their own names)", stats)
	}
}
