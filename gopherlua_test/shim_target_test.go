package gopherlua_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/lockgen/lockgen/internal/luacover"
	"github.com/lockgen/lockgen/lua"
	"github.com/lockgen/lockgen/luashim"
)

// shimTarget runs a scenario in the gopher-lua shim on a virtual clock that
// starts at the real time (so timestamps look like the real server's) and
// jumps to each step's offset.
type shimTarget struct {
	tb    testing.TB
	srv   *luashim.Server
	cov   *luacover.Recorder
	clock *luashim.VirtualClock
	t0    time.Time

	mu    sync.Mutex
	msgs  map[string][]string
	unsub []func()
}

func newShimTarget(tb testing.TB, channels []string) *shimTarget {
	return newShimTargetAt(tb, channels, time.Now())
}

// newShimTargetAt starts the shim's clock at t0: the differential test
// gives it the real run's start, so that both runs share one timeline and
// a number that only looks like a timestamp (a fence planted by a raw
// step) reads the same on both.
func newShimTargetAt(tb testing.TB, channels []string, t0 time.Time) *shimTarget {
	clock := luashim.NewVirtualClock(t0)
	srv, cov := luacover.NewServer(clock)
	s := &shimTarget{tb: tb, srv: srv, cov: cov, clock: clock, t0: t0, msgs: map[string][]string{}}
	for _, sc := range lua.All() {
		if _, err := s.srv.Load(sc.Name, sc.Source); err != nil {
			tb.Fatalf("load %s in the shim: %v", sc.Name, err)
		}
	}
	for _, ch := range channels {
		s.unsub = append(s.unsub, s.srv.Subscribe(ch, func(channel, payload string) {
			s.mu.Lock()
			s.msgs[channel] = append(s.msgs[channel], payload)
			s.mu.Unlock()
		}))
	}
	return s
}

func (s *shimTarget) name() string               { return "shim" }
func (s *shimTarget) start() time.Time           { return s.t0 }
func (s *shimTarget) advanceTo(at time.Duration) { s.clock.Set(s.t0.Add(at)) }

func (s *shimTarget) eval(sc *lua.Script, keys []string, args []string) any {
	v, err := s.srv.EvalSha(sc.SHA1, keys, args...)
	return normaliseShim(v, err)
}

func (s *shimTarget) do(args ...string) any {
	v, err := s.srv.Do(args...)
	return normaliseShim(v, err)
}

func normaliseShim(v any, err error) any {
	var re *luashim.ReplyError
	if errors.As(err, &re) {
		return replyError(re.Msg)
	}
	if err != nil {
		return replyError(err.Error())
	}
	switch x := v.(type) {
	case []any:
		return normaliseArray(x, normaliseShim)
	case luashim.Status:
		return string(x)
	case *luashim.ReplyError:
		return replyError(x.Msg)
	}
	return v
}

func (s *shimTarget) snapshot(keys []string) []keyState {
	want := map[string]bool{}
	for _, k := range keys {
		want[k] = true
	}
	var out []keyState
	// Snapshot is sorted by key; keys() lists B first, then its suffixes,
	// which sort the same way since every suffix starts with ':'.
	for _, k := range s.srv.Snapshot() {
		if !want[k.Key] {
			continue
		}
		st := keyState{Key: k.Key, Type: k.Type, PTTL: k.PTTL, At: s.clock.Now().Sub(s.t0).Milliseconds(), Value: k.String, Hash: k.Hash}
		for _, m := range k.ZSet {
			st.ZSet = append(st.ZSet, zmember{Member: m.Member, Score: m.Score})
		}
		out = append(out, st)
	}
	return out
}

func (s *shimTarget) messages(channel string, _ int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.msgs[channel]...)
}

func (s *shimTarget) close() {
	for _, u := range s.unsub {
		u()
	}
}
