package luashim

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// step is one command and the reply it must give; an error reply is
// written as a *ReplyError.
type step struct {
	args []string
	want any
}

func cmd(s string, want any) step { return step{strings.Fields(s), want} }

func errReply(msg string) *ReplyError { return &ReplyError{Msg: msg} }

// runSteps runs steps with Do on a fresh server.
func runSteps(t *testing.T, steps []step) {
	t.Helper()
	s, _ := newTestServer(t)
	for _, st := range steps {
		got, err := s.Do(st.args...)
		if err != nil {
			got = err
		}
		if !reflect.DeepEqual(got, st.want) {
			t.Errorf("%v: got %#v, want %#v", st.args, got, st.want)
		}
	}
}

const wrongType = "WRONGTYPE Operation against a key holding the wrong kind of value"

func TestStringCommands(t *testing.T) {
	runSteps(t, []step{
		cmd("GET s", nil),
		cmd("SET s v", Status("OK")),
		cmd("GET s", "v"),
		cmd("SET s w KEEPTTL GET XX", "v"),
		cmd("GET s", "w"),
		cmd("SET t w KEEPTTL GET XX", nil),
		cmd("GET t", nil),
		cmd("SET s v PX 0", errReply("ERR invalid expire time in 'set' command")),
		cmd("SET s v PX x", errReply("ERR value is not an integer or out of range")),
		cmd("GET", errReply("ERR wrong number of arguments for 'get' command")),
		cmd("HSET h f v", int64(1)),
		cmd("GET h", errReply(wrongType)),
		cmd("SET h v KEEPTTL GET XX", errReply(wrongType)),
		cmd("SET h v", Status("OK")),
		cmd("GET h", "v"),
	})
}

func TestHashCommands(t *testing.T) {
	runSteps(t, []step{
		cmd("HSET h a 1 b 2", int64(2)),
		cmd("HSET h a 3 c 4", int64(1)),
		cmd("HSET h a", errReply("ERR wrong number of arguments for 'hset' command")),
		cmd("HSET h a 1 b", errReply("ERR wrong number of arguments for 'hset' command")),
		cmd("HGET h a", "3"),
		cmd("HGET h z", nil),
		cmd("HSETNX h a 9", int64(0)),
		cmd("HSETNX h d 5", int64(1)),
		cmd("HMGET h a z d", []any{"3", nil, "5"}),
		cmd("HMGET nohash a", []any{nil}),
		cmd("HGETALL h", []any{"a", "3", "b", "2", "c", "4", "d", "5"}),
		cmd("HDEL h a b c d z", int64(4)),
		cmd("PTTL h", int64(-2)), // the emptied hash is gone
		cmd("HGETALL h", []any{}),
		cmd("SET str v", Status("OK")),
		cmd("HGET str f", errReply(wrongType)),
		cmd("HDEL str f", errReply(wrongType)),
	})
}

func TestSortedSetCommands(t *testing.T) {
	runSteps(t, []step{
		cmd("ZADD z 1 a", int64(1)),
		cmd("ZADD z 2 b", int64(1)),
		cmd("ZADD z 3 c", int64(1)),
		cmd("ZADD z 1 b", int64(0)),
		cmd("ZRANGE z 0 -1 WITHSCORES", []any{"a", "1", "b", "1", "c", "3"}),
		cmd("ZADD z NX 5 a", int64(0)),
		cmd("ZADD z nx 4 d", int64(1)),
		cmd("ZADD z 0.5 a", int64(0)),
		cmd("ZSCORE z a", "0.5"),
		cmd("ZADD z x a", errReply("ERR value is not a valid float")),
		cmd("ZCARD z", int64(4)),
		cmd("ZCOUNT z -inf +inf", int64(4)),
		cmd("ZCOUNT z (0.5 3", int64(2)),
		cmd("ZCOUNT z x 3", errReply("ERR min or max is not a float")),
		cmd("ZRANGEBYSCORE z 0.5 (4", []any{"a", "b", "c"}),
		cmd("ZRANGEBYSCORE z (1 +inf WITHSCORES", []any{"c", "3", "d", "4"}),
		cmd("ZRANGE z 1 -2", []any{"b", "c"}),
		cmd("ZRANGE z -1 9 WITHSCORES", []any{"d", "4"}),
		cmd("ZRANGE z 3 1", []any{}),
		cmd("ZREM z a nope", int64(1)),
		cmd("ZPOPMIN z", []any{"b", "1"}),
		cmd("ZREM z c d", int64(2)),
		cmd("PTTL z", int64(-2)),
		cmd("ZPOPMIN z", []any{}),
		cmd("SET s v", Status("OK")),
		cmd("ZADD s 1 a", errReply(wrongType)),
		cmd("ZSCORE s a", errReply(wrongType)),
	})
}

// Options and forms of kept commands that no script uses are refused, not
// emulated, and the error names what was refused.
func TestUnusedOptionsAreRefused(t *testing.T) {
	var steps []step
	for call, refused := range map[string]string{
		"SET s v NX": "SET NX", "SET s v EX 1": "SET EX 1", "SET s v EXAT 1": "SET EXAT 1", "SET s v PXAT 1": "SET PXAT 1",
		"SET s v GET": "SET GET", "SET s v XX": "SET XX", "SET s v XX GET KEEPTTL": "SET XX GET KEEPTTL",
		"SET s v PX 10 PX 20": "SET PX 10 PX 20", "SET s v KEEPTTL PX 10": "SET KEEPTTL PX 10", "SET s v PX": "SET PX",
		"SET s v bogus": "SET BOGUS",
		"ZADD z XX 1 a": "ZADD XX 1 a", "ZADD z NX GT 1 a": "ZADD NX GT 1 a", "ZADD z LT 1 a": "ZADD LT 1 a",
		"ZADD z CH 1 a": "ZADD CH 1 a", "ZADD z INCR 1 a": "ZADD INCR 1 a", "ZADD z 1 a 2 b": "ZADD 1 a 2 b",
		"ZADD z 1 a 2": "ZADD 1 a 2", "ZADD z XX LT 1 a": "ZADD XX LT 1 a", "ZADD z XX GT 1 a": "ZADD XX GT 1 a",
		"ZRANGE z 0 1 REV": "ZRANGE REV", "ZRANGE z 0 1 BYSCORE": "ZRANGE BYSCORE", "ZRANGE z 0 1 BYLEX": "ZRANGE BYLEX",
		"ZRANGE z 0 1 LIMIT 0 1": "ZRANGE LIMIT 0 1", "ZRANGEBYSCORE z 0 1 LIMIT 0 1": "ZRANGEBYSCORE LIMIT 0 1",
		"ZRANGE z 0 1 WITHSCORES WITHSCORES": "ZRANGE WITHSCORES WITHSCORES", "ZRANGEBYSCORE z 0 1 bogus": "ZRANGEBYSCORE BOGUS",
		"ZPOPMIN z 2": "ZPOPMIN count", "PEXPIRE k 1 XX": "PEXPIRE XX", "PEXPIREAT k 1 LT": "PEXPIREAT LT",
		"PEXPIRE k 100 foo": "PEXPIRE FOO", "PEXPIREAT k 1 NX GT": "PEXPIREAT NX GT",
	} {
		steps = append(steps, cmd(call, errReply("ERR lockgen-shim: "+refused+" is not supported")))
	}
	runSteps(t, steps)
}

func TestKeyCommandsAndTTL(t *testing.T) {
	s, clock := newTestServer(t)
	do := func(want any, args ...string) {
		t.Helper()
		got, err := s.Do(args...)
		if err != nil {
			got = err
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%v: got %#v, want %#v", args, got, want)
		}
	}
	do(Status("OK"), "SET", "a", "1", "PX", "1500")
	do(int64(1500), "PTTL", "a")
	do(int64(-2), "PTTL", "nokey")
	do(Status("OK"), "SET", "b", "1")
	do(int64(-1), "PTTL", "b")
	clock.Advance(1500 * time.Millisecond)
	do(int64(0), "PTTL", "a") // alive through its last millisecond
	clock.Advance(time.Millisecond)
	do(nil, "GET", "a")
	do(int64(1), "PEXPIRE", "b", "100")
	do(int64(0), "PEXPIRE", "b", "200", "NX")
	do(int64(0), "PEXPIRE", "b", "50", "GT")
	do(int64(1), "PEXPIRE", "b", "300", "GT")
	do(int64(1), "PEXPIRE", "b", "1000", "GT")
	do(int64(1000), "PTTL", "b")
	do(int64(0), "PEXPIRE", "nokey", "100")
	do(&ReplyError{Msg: "ERR invalid expire time in 'pexpire' command"}, "PEXPIRE", "b", "9223372036854775807")
	nowMs := clock.Now().UnixMilli()
	do(int64(1), "PEXPIREAT", "b", strconv.FormatInt(nowMs+2000, 10))
	do(int64(2000), "PTTL", "b")
	do(int64(1), "PEXPIRE", "b", "0") // a deadline in the past deletes
	do(int64(-2), "PTTL", "b")

	// SET drops the TTL unless KEEPTTL; HSET keeps it.
	do(Status("OK"), "SET", "c", "1", "PX", "10000")
	do(int64(10000), "PTTL", "c")
	do(Status("OK"), "SET", "c", "5", "KEEPTTL")
	do(int64(10000), "PTTL", "c")
	do(Status("OK"), "SET", "c", "5")
	do(int64(-1), "PTTL", "c")

	// DEL counts per argument.
	do(Status("OK"), "SET", "d", "1")
	do(int64(2), "DEL", "c", "d", "nokey")
	if snap := s.Snapshot(); len(snap) != 0 {
		t.Errorf("Snapshot after DEL = %+v, want empty", snap)
	}

	// Snapshot leaves out expired keys.
	do(int64(1), "HSET", "h", "f", "v")
	do(int64(1), "PEXPIRE", "h", "10")
	do(int64(1), "HSET", "h", "g", "w")
	do(int64(10), "PTTL", "h")
	clock.Advance(11 * time.Millisecond)
	if snap := s.Snapshot(); len(snap) != 0 {
		t.Errorf("Snapshot after expiry = %+v, want empty", snap)
	}
}

func TestTimeCommand(t *testing.T) {
	s, clock := newTestServer(t)
	clock.Set(time.Unix(1_700_000_123, 456_789_000))
	got, err := s.Do("TIME")
	if err != nil {
		t.Fatal(err)
	}
	want := []any{"1700000123", "456789"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("TIME = %#v, want %#v", got, want)
	}
}

func TestSnapshot(t *testing.T) {
	s, _ := newTestServer(t)
	for _, args := range [][]string{
		{"SET", "s", "v", "PX", "5000"},
		{"HSET", "h", "f", "1"},
		{"ZADD", "z", "2", "b"},
		{"ZADD", "z", "1", "a"},
	} {
		if _, err := s.Do(args...); err != nil {
			t.Fatal(err)
		}
	}
	want := []KeyState{
		{Key: "h", Type: "hash", PTTL: -1, Hash: map[string]string{"f": "1"}},
		{Key: "s", Type: "string", PTTL: 5000, String: "v"},
		{Key: "z", Type: "zset", PTTL: -1, ZSet: []ZMember{{"a", 1}, {"b", 2}}},
	}
	if got := s.Snapshot(); !reflect.DeepEqual(got, want) {
		t.Errorf("Snapshot =\n%+v\nwant\n%+v", got, want)
	}
}

func TestNoScriptAndCompileErrors(t *testing.T) {
	s, _ := newTestServer(t)
	_, err := s.EvalSha("0000000000000000000000000000000000000000", nil)
	if err == nil || !strings.HasPrefix(err.Error(), "NOSCRIPT") {
		t.Errorf("EvalSha of unknown sha: %v, want NOSCRIPT", err)
	}
	_, err = s.Load("broken", "return (")
	if err == nil || !strings.HasPrefix(err.Error(), "ERR Error compiling script") {
		t.Errorf("Load of broken script: %v, want a compile error", err)
	}
}

func TestPublishDelivery(t *testing.T) {
	s, _ := newTestServer(t)
	var got []string
	unsub := s.Subscribe("ch", func(channel, payload string) {
		got = append(got, channel+"="+payload)
		if payload == "first" { // a callback may re-enter the server
			if _, err := s.Do("PUBLISH", "ch", "from-callback"); err != nil {
				t.Error(err)
			}
		}
	})
	n, err := s.Eval("local a = redis.call('publish', KEYS[1], 'first')\n"+
		"local b = redis.call('spublish', KEYS[1], 'second')\n"+
		"return a + b", []string{"ch"})
	if err != nil || n != int64(2) {
		t.Fatalf("script publishing twice: %v, %v; want 2 receivers", n, err)
	}
	want := []string{"ch=first", "ch=second", "ch=from-callback"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("delivered %q, want %q", got, want)
	}
	unsub()
	if n, _ := s.Do("PUBLISH", "ch", "after"); n != int64(0) {
		t.Errorf("PUBLISH after unsubscribe reached %v subscribers, want 0", n)
	}
	if len(got) != 3 {
		t.Errorf("message delivered after unsubscribe: %q", got)
	}
}
