package luashim

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

func newTestServer(t testing.TB) (*Server, *VirtualClock) {
	t.Helper()
	clock := NewVirtualClock(time.Unix(1_700_000_000, 0))
	return New(clock), clock
}

// TestLuaToReply covers what a script's return value becomes.
func TestLuaToReply(t *testing.T) {
	s, _ := newTestServer(t)
	cases := []struct {
		src  string
		want any
	}{
		{"return 42", int64(42)},
		{"return 3.99", int64(3)},
		{"return -3.99", int64(-3)},
		{"return 0.5", int64(0)},
		{"return 'text'", "text"},
		{"return '42'", "42"},
		{"return true", int64(1)},
		{"return false", nil},
		{"return nil", nil},
		{"return", nil},
		{"return {}", []any{}},
		{"return {1, 'a', true}", []any{int64(1), "a", int64(1)}},
		{"return {1, nil, 3}", []any{int64(1)}},
		{"return {1, {2, {3}}}", []any{int64(1), []any{int64(2), []any{int64(3)}}}},
		{"return {ok='FINE'}", Status("FINE")},
		{"return {1, {ok='OK'}, {err='ERR inner'}}", []any{int64(1), Status("OK"), &ReplyError{Msg: "ERR inner"}}},
		{"return {x=1}", []any{}},
		{"return 1, 2", int64(1)},
		{"return 2^53", int64(1 << 53)},
	}
	for _, c := range cases {
		got, err := s.Eval(c.src, nil)
		if err != nil {
			t.Errorf("%s: unexpected error %v", c.src, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %#v (%T), want %#v (%T)", c.src, got, got, c.want, c.want)
		}
	}
}

func TestLuaFalseInsideArray(t *testing.T) {
	s, _ := newTestServer(t)
	// Redis turns false into a null bulk, which does not end the array.
	got, err := s.Eval("return {1, false, 2}", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []any{int64(1), nil, int64(2)}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v, want %#v", got, want)
	}
}

func TestErrorReplies(t *testing.T) {
	s, _ := newTestServer(t)
	// SHA stands for the script's SHA1, which Redis puts in raised errors.
	cases := []struct{ src, want string }{
		{"return redis.error_reply('ERR lockgen: bad lease')", "ERR lockgen: bad lease"},
		{"return {err='CUSTOM thing'}", "CUSTOM thing"},
		{"error({err='ERR lockgen: raised'})", "ERR lockgen: raised script: SHA, on @user_script:1."},
		{"\nerror('boom')", "ERR user_script:2: boom script: SHA, on @user_script:2."},
		{"local t = nil\nreturn t.x", "ERR user_script:2: attempt to index a non-table object(nil) with key 'x' script: SHA, on @user_script:2."},
		{"local k = KEYS[1]\nredis.call('set', k, 'x')\nreturn redis.call('pexpire', k, 'x')", "ERR value is not an integer or out of range script: SHA, on @user_script:3."},
	}
	for _, c := range cases {
		_, err := s.Eval(c.src, []string{"k"})
		rerr, ok := err.(*ReplyError)
		if !ok {
			t.Errorf("%s: got %v (%T), want a *ReplyError", c.src, err, err)
			continue
		}
		if want := strings.Replace(c.want, "SHA", sha1hex(c.src), 1); rerr.Msg != want {
			t.Errorf("%s:\n got  %q\n want %q", c.src, rerr.Msg, want)
		}
	}
}

func TestReplyErrorNamesScript(t *testing.T) {
	s, _ := newTestServer(t)
	sha, err := s.Load("failing", "error('boom')")
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.EvalSha(sha, nil)
	var rerr *ReplyError
	if !errors.As(err, &rerr) || rerr.Script != "failing" {
		t.Fatalf("got %#v, want a *ReplyError with Script \"failing\"", err)
	}
}

func TestRedisCallConversions(t *testing.T) {
	s, _ := newTestServer(t)
	cases := []struct {
		src  string
		want any
	}{
		// Redis -> Lua
		{"redis.call('set', KEYS[1], 'v'); return type(redis.call('pttl', KEYS[1]))", "number"},
		{"return type(redis.call('get', KEYS[1]))", "string"},
		{"redis.call('del', KEYS[1]); return redis.call('get', KEYS[1]) == false", int64(1)},
		{"redis.call('set', KEYS[1], 'v'); return redis.call('get', KEYS[1])", "v"},
		{"return redis.call('set', KEYS[1], 'v').ok", "OK"},
		{"return redis.pcall('hget', KEYS[1], 'f').err", "WRONGTYPE Operation against a key holding the wrong kind of value"},
		{"local ok, e = pcall(redis.call, 'hget', KEYS[1], 'f'); return {tostring(ok), e}", []any{"false", "WRONGTYPE Operation against a key holding the wrong kind of value"}},
		{"redis.call('del', KEYS[1]); return #redis.call('zpopmin', KEYS[1])", int64(0)},
		{"return #redis.call('time')", int64(2)},
		// Lua numbers as arguments
		{"redis.call('set', KEYS[1], 3); return redis.call('get', KEYS[1])", "3"},
		{"redis.call('set', KEYS[1], 3.0); return redis.call('get', KEYS[1])", "3"},
		{"redis.call('set', KEYS[1], 1.5); return redis.call('get', KEYS[1])", "1.5"},
		{"redis.call('set', KEYS[1], 0.1); return redis.call('get', KEYS[1])", "0.10000000000000001"},
		{"redis.call('set', KEYS[1], 1e20); return redis.call('get', KEYS[1])", "1e+20"},
		{"redis.call('set', KEYS[1], -2^63); return redis.call('get', KEYS[1])", "-9.2233720368547758e+18"},
		{"redis.call('set', KEYS[1], 1/0); return redis.call('get', KEYS[1])", "inf"},
	}
	for _, c := range cases {
		got, err := s.Eval(c.src, []string{"k"})
		if err != nil {
			t.Errorf("%s: unexpected error %v", c.src, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %#v, want %#v", c.src, got, c.want)
		}
	}
}

func TestRedisCallArgumentErrors(t *testing.T) {
	s, _ := newTestServer(t)
	cases := []struct{ src, prefix string }{
		{"return redis.call()", "ERR Please specify at least one argument for this redis lib call script: "},
		{"return redis.call('get', {})", "ERR Lua redis lib command arguments must be strings or integers script: "},
		{"return redis.call('get', nil)", "ERR Lua redis lib command arguments must be strings or integers script: "},
		{"return redis.call('get')", "ERR Wrong number of args calling Redis command from script script: "},
	}
	for _, c := range cases {
		_, err := s.Eval(c.src, []string{"k"})
		if err == nil || !strings.HasPrefix(err.Error(), c.prefix) {
			t.Errorf("%s: got %v, want prefix %q", c.src, err, c.prefix)
		}
	}
}

func TestLuaNumberToInt(t *testing.T) {
	cases := map[float64]int64{
		2.9:          2,
		-2.9:         -2,
		1e300:        math.MaxInt64,
		-1e300:       math.MinInt64,
		math.Inf(1):  math.MaxInt64,
		math.Inf(-1): math.MinInt64,
	}
	for f, want := range cases {
		if got := luaNumberToInt(f); got != want {
			t.Errorf("luaNumberToInt(%v) = %d, want %d", f, got, want)
		}
	}
}
