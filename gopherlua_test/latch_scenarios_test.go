package gopherlua_test

import (
	"fmt"

	"github.com/lockgen/lockgen/lua"
)

// latchFamily: a latch is one hash and its wake channel.
var latchFamily = family{"latch", []string{"", ":wake"}, []string{"latch_"}, nil}

// latchReply checks a {flag, generation} reply of latch_set (flag 1 set, 0
// exists) or latch_count (flag = the count). gen says which generation:
// "new" a latch set now (above every generation seen before), "same" the
// one seen last, "none" 0 (no latch).
func latchReply(flag int64, gen string) check {
	return func(r *run, st *step, got any) error {
		f, g, err := pair(got)
		if err != nil {
			return err
		}
		if f != flag {
			return fmt.Errorf("reply %v, want %d first", got, flag)
		}
		switch gen {
		case "new":
			if g <= r.lastFence {
				return fmt.Errorf("generation %d not above the last one %d", g, r.lastFence)
			}
			r.lastFence = g
		case "same":
			if g != r.lastFence || g == 0 {
				return fmt.Errorf("generation %d, want the latch's %d", g, r.lastFence)
			}
		case "none":
			if g != 0 {
				return fmt.Errorf("generation %d, want 0 (no latch)", g)
			}
		}
		return nil
	}
}

func latchScenarios() []*scenario {
	set, down, count := lua.LatchSet, lua.LatchCountDown, lua.LatchCount
	const ttl = 1000 * ms
	three := []string{"3"}
	counting := func(parties ...string) []keyWant {
		return []keyWant{{fields: append([]string{"c", "g", "s"}, parties...), ttl: ttl}}
	}
	return []*scenario{
		{
			// Set once (a retried set is the same setting, another setter is
			// told it exists), three parties count down once each whatever
			// their retries, the last one publishes "open", the open latch
			// stays open (and not re-armed) for one TTL after its last use.
			name: "latch-open", fam: latchFamily,
			steps: []step{
				{at: 0, script: count, holder: "W", lease: ttl, want: latchReply(0, "none"), expect: gone(latchFamily)},
				{at: 0, script: down, holder: "P1", lease: ttl, want: integer(-1), expect: gone(latchFamily)},
				{at: 10 * ms, script: set, holder: "S", lease: ttl, extra: three, want: latchReply(1, "new"), expect: counting()},
				{at: 20 * ms, script: set, holder: "S", lease: ttl, extra: three, want: latchReply(1, "same"), leaseOnly: true},
				{at: 30 * ms, script: set, holder: "T", lease: ttl, extra: []string{"5"}, want: latchReply(0, "same"), leaseOnly: true},
				{at: 40 * ms, script: down, holder: "P1", lease: ttl, want: integer(2), expect: counting("p:P1")},
				{at: 50 * ms, script: down, holder: "P1", lease: ttl, want: integer(2), leaseOnly: true},
				{at: 60 * ms, script: count, holder: "W", lease: ttl, want: latchReply(2, "same"), leaseOnly: true},
				{at: 70 * ms, script: down, holder: "P2", lease: ttl, want: integer(1), expect: counting("p:P1", "p:P2")},
				{at: 80 * ms, script: down, holder: "P3", lease: ttl, want: integer(0), expect: counting()},
				{at: 90 * ms, script: down, holder: "P3", lease: ttl, want: integer(0), leaseOnly: true},
				{at: 90 * ms, script: down, holder: "P4", lease: ttl, want: integer(0), leaseOnly: true},
				{at: 100 * ms, script: count, holder: "W", lease: ttl, want: latchReply(0, "same"), leaseOnly: true},
				{at: 100 * ms, script: set, holder: "U", lease: ttl, extra: []string{"2"}, want: latchReply(0, "same"), leaseOnly: true},
				{at: 1050 * ms, script: count, holder: "W", lease: ttl, want: latchReply(0, "same"), expect: counting()},
				{at: 2200 * ms, script: count, holder: "W", lease: ttl, want: latchReply(0, "none"), expect: gone(latchFamily)},
			},
			wakes: []string{"open"},
		},
		{
			// Every use restarts the TTL (the caller's); a latch nobody
			// uses for its TTL is gone, a count-down then writes nothing,
			// and a new set makes a new generation. Each step that needs
			// the latch still there comes at least 200 ms before its TTL
			// would end, more than the lateness after which the real
			// server's run is played again (realTolerance/2); steps that
			// need it gone only get safer when late.
			name: "latch-ttl", fam: latchFamily,
			steps: []step{
				{at: 0, script: set, holder: "S", lease: 300 * ms, extra: three, want: latchReply(1, "new"),
					expect: []keyWant{{ttl: 300 * ms}}},
				{at: 100 * ms, script: down, holder: "P1", lease: 700 * ms, want: integer(2), expect: []keyWant{{ttl: 700 * ms}}},
				{at: 400 * ms, script: count, holder: "W", lease: 1000 * ms, want: latchReply(2, "same"), expect: []keyWant{{ttl: 1000 * ms}}},
				{at: 1000 * ms, script: count, holder: "W", lease: 300 * ms, want: latchReply(2, "same")},
				{at: 1500 * ms, script: down, holder: "P2", lease: 300 * ms, want: integer(-1), expect: gone(latchFamily)},
				{at: 1500 * ms, script: set, holder: "S2", lease: 300 * ms, extra: []string{"1"}, want: latchReply(1, "new")},
				{at: 1510 * ms, script: down, holder: "P1", lease: 300 * ms, want: integer(0), expect: []keyWant{{fields: []string{"c", "g", "s"}, ttl: 300 * ms}}},
			},
			wakes: []string{"open"},
		},
		{
			// On Cluster the wake goes by SPUBLISH.
			name: "latch-sharded", fam: latchFamily, sharded: true,
			steps: []step{
				{at: 0, script: set, holder: "S", lease: ttl, extra: []string{"1"}, want: latchReply(1, "new")},
				{at: 10 * ms, script: down, holder: "P", lease: ttl, want: integer(0)},
			},
			wakes: []string{"open"},
		},
		latchMalformed(),
	}
}

// badLatchValues are hashes at B that no latch script wrote (field, value
// pairs): every latch script must refuse them with "unexpected latch value".
var badLatchValues = [][]string{
	{"c", "x", "g", "1700000000000000", "s", "S"},  // count not a number
	{"c", "-1", "g", "1700000000000000", "s", "S"}, // count negative
	{"c", "1.5", "g", "1700000000000000", "s", "S"},
	{"c", "3", "g", "soon", "s", "S"},   // generation not a number
	{"c", "3", "s", "S"},                // generation missing
	{"c", "3", "g", "1700000000000000"}, // setter missing
	{"s", "S"},
}

// latchMalformed: every latch script refuses malformed ARGV, too few KEYS
// and damaged hashes, and writes nothing.
func latchMalformed() *scenario {
	sc := &scenario{name: "malformed-latch", fam: latchFamily}
	good := []string{"A", "1000", "PUBLISH"}
	refuse := func(s *lua.Script, keys, args []string) {
		sc.steps = append(sc.steps, step{script: s, keys: keys, args: args, want: fails("ERR lockgen:"), unchanged: true})
	}
	extra := func(s *lua.Script) []string {
		if s == lua.LatchSet {
			return []string{"3"}
		}
		return nil
	}
	for _, s := range latchFamily.scripts() {
		for _, args := range badArgv {
			a := append([]string(nil), args...)
			if len(a) == 3 {
				a = append(a, extra(s)...)
			}
			refuse(s, nil, a)
		}
		refuse(s, sc.keyNames()[:1], append(good, extra(s)...))
	}
	refuse(lua.LatchSet, nil, good)
	for _, n := range []string{"0", "-1", "x", "", "1.5", "2147483649"} {
		refuse(lua.LatchSet, nil, append(good, n))
	}
	b := sc.keyNames()[0]
	for _, v := range badLatchValues {
		sc.steps = append(sc.steps,
			step{raw: []string{"DEL", b}},
			step{raw: append([]string{"HSET", b}, v...)},
			step{raw: []string{"PEXPIRE", b, "5000"}, want: integer(1)})
		for _, s := range latchFamily.scripts() {
			sc.steps = append(sc.steps, step{script: s, holder: "A", lease: 1000 * ms, extra: extra(s),
				want: fails("ERR lockgen: unexpected latch value"), unchanged: true})
		}
	}
	return sc
}

// gone expects every data key of the family to be absent (a latch keeps no
// fence, so nothing is left of it).
func gone(f family) []keyWant {
	var out []keyWant
	for _, s := range f.suffixes[:len(f.suffixes)-1] {
		out = append(out, keyWant{suffix: s, absent: true})
	}
	return out
}
