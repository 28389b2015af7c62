// Package gopherlua_test checks lockgen's Lua scripts: scenario tables run
// step by step in the gopher-lua shim (package luashim, virtual clock) and
// against a real redis-server (package redistest, real clock). Both runs must
// meet each step's expectations and must agree with each other reply for
// reply and key for key; a coverage test fails if any line of any script is
// never executed offline; a cost test pins how many Redis commands the common
// paths take.
package gopherlua_test

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/lockgen/lockgen/lua"
)

// target is somewhere a scenario runs: the shim or a real server. A target
// serves one scenario; its clock starts at start() and moves forward only
// through advanceTo.
type target interface {
	name() string
	start() time.Time
	// advanceTo moves the target's clock to start()+at (shim) or sleeps until
	// then (real server).
	advanceTo(at time.Duration)
	// eval runs a script; the reply is normalised to int64, string, nil,
	// []any, or replyError for an error reply.
	eval(s *lua.Script, keys []string, args []string) any
	// do runs one plain command, for setting up damaged states.
	do(args ...string) any
	// snapshot reads the given keys; absent keys are left out.
	snapshot(keys []string) []keyState
	// messages returns every payload published so far on channel, after
	// waiting up to a short while for at least want of them to arrive.
	messages(channel string, want int) []string
	close()
}

// replyError is an error reply, kept as a value so replies compare with ==.
type replyError string

// normaliseArray normalises each element of an array reply with the
// target's own normalise, so that nested replies take the common form too.
func normaliseArray(x []any, normalise func(v any, err error) any) []any {
	out := make([]any, len(x))
	for i, e := range x {
		out[i] = normalise(e, nil)
	}
	return out
}

// keyState is one key as both targets report it.
type keyState struct {
	Key  string
	Type string // string, hash, zset
	PTTL int64  // ms; -1 no TTL
	// At is when PTTL was read, in ms since the target's start: a key's
	// expiry is At + PTTL, which stays put while a real server's steps run
	// late (its PTTL shrinks as real time passes, the shim's does not).
	At    int64
	Value string // string keys
	Hash  map[string]string
	ZSet  []zmember // by score, then member
}

type zmember struct {
	Member string
	Score  float64
}

func (k keyState) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s pttl=%d@%d", k.Key, k.Type, k.PTTL, k.At)
	switch k.Type {
	case "string":
		fmt.Fprintf(&b, " %q", k.Value)
	case "hash":
		fields := make([]string, 0, len(k.Hash))
		for f := range k.Hash {
			fields = append(fields, f)
		}
		sort.Strings(fields)
		for _, f := range fields {
			fmt.Fprintf(&b, " %s=%q", f, k.Hash[f])
		}
	case "zset":
		for _, m := range k.ZSet {
			fmt.Fprintf(&b, " %s:%.0f", m.Member, m.Score)
		}
	}
	return b.String()
}
