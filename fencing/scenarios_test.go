package fencing

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/goredisbackend"
	"github.com/redis/go-redis/v9"

	"github.com/lockgen/lockgen/embedded"
	"github.com/lockgen/lockgen/internal/luacover"
	"github.com/lockgen/lockgen/lua"
	"github.com/lockgen/lockgen/luashim"
	"github.com/lockgen/lockgen/redistest"
)

// scenario is one script call on a key prepared by setup (commands, with
// "K" standing for the scenario's key), and what it must reply and leave in
// the key's "value" and "fence" fields (nil for a field that is absent).
type scenario struct {
	name    string
	setup   [][]string
	script  *lua.Script
	args    []string
	want    any    // the reply, when wantErr is ""
	wantErr string // the start of the error reply
	after   []any  // HMGET K value fence
}

var scenarios = []scenario{
	{name: "first write", script: setScript, args: []string{"paid", "100"},
		want: []any{int64(1), int64(100)}, after: []any{"paid", "100"}},
	{name: "older token refused", setup: [][]string{{"HSET", "K", "value", "paid", "fence", "100"}},
		script: setScript, args: []string{"late", "99"},
		want: []any{int64(0), int64(100)}, after: []any{"paid", "100"}},
	{name: "same token writes again", setup: [][]string{{"HSET", "K", "value", "paid", "fence", "100"}},
		script: setScript, args: []string{"shipped", "100"},
		want: []any{int64(1), int64(100)}, after: []any{"shipped", "100"}},
	{name: "newer token writes", setup: [][]string{{"HSET", "K", "value", "paid", "fence", "100"}},
		script: setScript, args: []string{"refunded", "1795263116976678"},
		want: []any{int64(1), int64(1795263116976678)}, after: []any{"refunded", "1795263116976678"}},
	{name: "largest token", script: setScript, args: []string{"v", "9007199254740992"},
		want: []any{int64(1), int64(9007199254740992)}, after: []any{"v", "9007199254740992"}},
	{name: "hash without a fence field", setup: [][]string{{"HSET", "K", "value", "old"}},
		script: setScript, args: []string{"new", "5"},
		want: []any{int64(1), int64(5)}, after: []any{"new", "5"}},
	{name: "token zero", script: setScript, args: []string{"v", "0"},
		wantErr: "ERR fencing: token must be", after: []any{nil, nil}},
	{name: "token not a number", script: setScript, args: []string{"v", "12a"},
		wantErr: "ERR fencing: token must be", after: []any{nil, nil}},
	{name: "negative token", script: setScript, args: []string{"v", "-5"},
		wantErr: "ERR fencing: token must be", after: []any{nil, nil}},
	{name: "token above 2^53", script: setScript, args: []string{"v", "9007199254740993"},
		wantErr: "ERR fencing: token must be", after: []any{nil, nil}},
	{name: "token of 17 digits", script: setScript, args: []string{"v", "10000000000000000"},
		wantErr: "ERR fencing: token must be", after: []any{nil, nil}},
	{name: "stored fence not a number", setup: [][]string{{"HSET", "K", "value", "x", "fence", "abc"}},
		script: setScript, args: []string{"v", "7"},
		wantErr: "ERR fencing: the key holds a fence that is not a number", after: []any{"x", "abc"}},
	{name: "key of another type", setup: [][]string{{"SET", "K", "plain"}},
		script: setScript, args: []string{"v", "7"}, wantErr: "WRONGTYPE"},
	{name: "get missing", script: getScript, want: []any{}, after: []any{nil, nil}},
	{name: "get written", setup: [][]string{{"HSET", "K", "value", "paid", "fence", "100"}},
		script: getScript, want: []any{"paid", int64(100)}, after: []any{"paid", "100"}},
	{name: "get fence without value", setup: [][]string{{"HSET", "K", "fence", "3"}},
		script: getScript, want: []any{"", int64(3)}, after: []any{nil, "3"}},
}

// target is where a scenario runs: a Backend for the script and a way to
// send plain commands.
type target struct {
	name    string
	backend backend.Backend
	do      func(ctx context.Context, args ...string) (any, error)
}

func shimTarget(srv *luashim.Server) target {
	return target{name: "shim", backend: embedded.NewBackend(srv),
		do: func(_ context.Context, args ...string) (any, error) { return srv.Do(args...) }}
}

func redisTarget(t *testing.T) target {
	rdb := redistest.Start(t).Client(t)
	return target{name: "redis-server", backend: goredisbackend.New(rdb),
		do: func(ctx context.Context, args ...string) (any, error) {
			as := make([]any, len(args))
			for i, a := range args {
				as[i] = a
			}
			v, err := rdb.Do(ctx, as...).Result()
			if errors.Is(err, redis.Nil) {
				return nil, nil
			}
			return v, err
		}}
}

// The scenario table runs on the shim and on redis-server, and both must
// give the replies and leave the data it states; the shim must have run
// every line of both scripts.
func TestScenariosShimAndRedis(t *testing.T) {
	srv, rec := luacover.NewServer(luashim.NewVirtualClock(time.Unix(1_700_000_000, 0)))
	for _, tg := range []target{shimTarget(srv), redisTarget(t)} {
		t.Run(tg.name, func(t *testing.T) {
			for i, sc := range scenarios {
				runScenario(t, tg, fmt.Sprintf("fencing:test:%d", i), sc)
			}
		})
	}
	for _, cov := range rec.Coverage() {
		if missed := cov.Missed(); len(missed) > 0 {
			t.Errorf("%s.lua: lines %v never ran in the scenarios", cov.Name, missed)
		}
	}
	if n := len(rec.Coverage()); n != 2 {
		t.Errorf("coverage reports %d scripts, want fenced_set and fenced_get", n)
	}
}

func runScenario(t *testing.T, tg target, key string, sc scenario) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, cmd := range sc.setup {
		cmd = append([]string(nil), cmd...)
		cmd[1] = key
		if _, err := tg.do(ctx, cmd...); err != nil {
			t.Fatalf("%s: setup %v: %v", sc.name, cmd, err)
		}
	}
	got, err := tg.backend.Eval(ctx, backend.Call{Script: sc.script, Keys: []string{key}, Args: sc.args})
	switch {
	case sc.wantErr != "":
		if err == nil || !strings.HasPrefix(err.Error(), sc.wantErr) {
			t.Errorf("%s: reply %v, error %v; want an error starting %q", sc.name, got, err, sc.wantErr)
		}
	case err != nil:
		t.Errorf("%s: error %v, want %v", sc.name, err, sc.want)
	case !reflect.DeepEqual(got, sc.want):
		t.Errorf("%s: reply %#v, want %#v", sc.name, got, sc.want)
	}
	if sc.after == nil {
		return
	}
	fields, err := tg.do(ctx, "HMGET", key, "value", "fence")
	if err != nil {
		t.Fatalf("%s: HMGET: %v", sc.name, err)
	}
	if !reflect.DeepEqual(fields, sc.after) {
		t.Errorf("%s: value and fence after: %#v, want %#v", sc.name, fields, sc.after)
	}
}
