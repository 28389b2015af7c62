package gopherlua_test

import (
	"slices"
	"strings"
	"time"

	"github.com/lockgen/lockgen/lua"
)

// badArgv lists malformed ARGV every script must refuse with an
// "ERR lockgen:" error before writing anything.
var badArgv = [][]string{
	{"", "1000", "PUBLISH"},                      // empty holder
	{"a b", "1000", "PUBLISH"},                   // holder with a space
	{"!", "1000", "PUBLISH"},                     // holder that is the tombstone's mark
	{strings.Repeat("h", 65), "1000", "PUBLISH"}, // holder too long
	{"A", "0", "PUBLISH"},                        // lease zero
	{"A", "-5", "PUBLISH"},                       // lease negative
	{"A", "1.5", "PUBLISH"},                      // lease not an integer
	{"A", "2147483649", "PUBLISH"},               // lease above 2^31
	{"A", "99999999999", "PUBLISH"},              // lease far too long
	{"A", "1000", "EVAL"},                        // not a publish command
	{"A", "1000"},                                // publish command missing
}

// badWindows are mutex_acquire ARGV[4] values that are not an integer
// number of ms in 0..2^31 (any spelling Lua reads as one is taken).
var badWindows = []string{"", "-1", "-0", "1.5", "x", "0.5", "1e-3", "2147483649", "99999999999", "once", "waited"}

// badNextWaiters are mutex_acquire ARGV[5] values (the next waiter of the
// caller's process) that are no holder id, or the caller's own ("A").
var badNextWaiters = []string{"", "a b", "!", strings.Repeat("h", 65), "A"}

// badFloors are mutex_floor ARGV[4] values outside "a positive integer of
// at most 16 digits, spelt plainly".
var badFloors = []string{"", "0", "-1", "01", "1.5", "x", " 5", "+5", "1e15", "17000000000000000"}

// badLockValues are string lock values (mutex, fair) that no script wrote:
// every script of the family must refuse them with "unexpected lock value".
var badLockValues = []string{
	"not a lock",
	"",
	"A 1700000000000000",                     // waiters flag missing
	"A 1700000000000000 2",                   // waiters flag not -/+
	"A x -",                                  // fence not a number
	"A -1700000000000000 -",                  // fence with a sign
	"A 1 1700000000000000 -",                 // the old "<holder> <count> <fence> <waited>"
	"A 1 1700000000000000 1 B 1700000000000", // the old mutex heir form
	"A  1700000000000000 -",                  // two spaces
	"A 1700000000000000 - ",                  // trailing space
}

// protocol1Values are lock values lockgen's protocol 1 wrote (waiters flag
// 0 or 1): every script refuses them with the protocol error, so that an
// old and a new process never share a lock (protocol_test.go runs the old
// scripts themselves against the new).
var protocol1Values = []string{
	"A 1700000000000000 0",
	"A 1700000000000000 1",
	"! 1700000000000000 0",
}

// lockValueError is what the scripts reply for a damaged value v.
func lockValueError(v string) string {
	if slices.Contains(protocol1Values, v) {
		return "ERR lockgen: lock written by lockgen protocol 1"
	}
	return "ERR lockgen: unexpected lock value"
}

// malformedScenarios: for every family, a lock is held, then every script
// of the family (every script of package lua whose name has the family's
// prefix) gets every malformed ARGV, too few KEYS, and (for string locks)
// damaged values; each must fail and leave every key as it was.
func malformedScenarios() []*scenario {
	type fam struct {
		f      family
		take   *lua.Script
		extra  []string // the rest of a good ARGV of take
		damage []string // string lock values the scripts must refuse
	}
	fams := []fam{
		{mutexFamily, lua.MutexAcquire, []string{"500"}, append(badLockValues, protocol1Values...)},
		{fairFamily, lua.FairAcquire, nil, append(badLockValues, protocol1Values...)},
		{rwFamily, lua.WriteAcquire, nil, nil},
		{semFamily, lua.SemaphoreAcquire, []string{"1"}, nil},
	}
	var out []*scenario
	for _, fm := range fams {
		sc := &scenario{name: "malformed-" + fm.f.name, fam: fm.f}
		sc.steps = append(sc.steps, step{at: 0, script: fm.take, holder: "A", lease: 5000 * ms, extra: fm.extra, want: granted()})
		at := 10 * ms
		for _, s := range fm.f.scripts() {
			sc.steps = append(sc.steps, badCalls(sc, s, at)...)
			at += 10 * ms
		}
		b := sc.keyNames()[0]
		for _, v := range fm.damage {
			sc.steps = append(sc.steps, step{at: at, raw: []string{"SET", b, v, "PX", "5000"}, want: isOK()})
			for _, s := range fm.f.scripts() {
				kinds := [][]string{nil} // every ARGV[4] the script takes
				switch s {
				case lua.MutexAcquire:
					kinds = [][]string{{"0"}, {"500"}}
				case lua.MutexFloor:
					kinds = [][]string{{"1700000000000000"}}
				case lua.MutexRelease:
					// Without a guess B is only read; with one, the
					// tombstone written on it is taken back.
					kinds = [][]string{nil, {"1"}}
				}
				// The holder in the value and a stranger alike.
				for _, h := range []string{"A", "B", "C"} {
					for _, a4 := range kinds {
						sc.steps = append(sc.steps, step{at: at, script: s, holder: h, lease: 1000 * ms, extra: a4,
							want: fails(lockValueError(v)), unchanged: true})
					}
				}
			}
			at += 10 * ms
		}
		out = append(out, sc)
	}
	return out
}

// badCalls: every way to call s wrongly, each refused with nothing written.
func badCalls(sc *scenario, s *lua.Script, at time.Duration) []step {
	var extra []string // a good ARGV[4], where s takes one
	switch s {
	case lua.MutexAcquire:
		extra = []string{"500"}
	case lua.MutexFloor:
		extra = []string{"1700000000000000"}
	case lua.SemaphoreAcquire:
		extra = []string{"2"}
	}
	var steps []step
	refuse := func(keys, args []string) {
		steps = append(steps, step{at: at, script: s, keys: keys, args: args, want: fails("ERR lockgen:"), unchanged: true})
	}
	for _, args := range badArgv {
		a := append([]string(nil), args...)
		if len(a) == 3 {
			a = append(a, extra...)
		}
		refuse(nil, a)
	}
	good := []string{"A", "1000", "PUBLISH"}
	if extra != nil {
		refuse(nil, good) // ARGV[4] missing
	}
	switch s {
	case lua.MutexAcquire:
		for _, w := range badWindows {
			refuse(nil, append(good, w))
		}
		for _, n := range badNextWaiters {
			refuse(nil, append(good, "500", n))
		}
	case lua.MutexRelease:
		for _, mode := range []string{"", "ALL", "one", "1"} {
			refuse(nil, append(good, "", "", mode))
		}
	case lua.MutexFloor:
		for _, f := range badFloors {
			refuse(nil, append(good, f))
		}
	case lua.SemaphoreAcquire:
		for _, permits := range []string{"0", "-1", "x", "", "2147483649"} {
			refuse(nil, append(good, permits))
		}
	}
	keys := sc.keyNames()
	refuse(keys[:1], append(good, extra...))
	refuse(keys[:len(keys)-1], append(good, extra...))
	return steps
}

func isOK() check {
	return func(r *run, st *step, got any) error {
		if got != "OK" {
			return errorf("reply %#v, want OK", got)
		}
		return nil
	}
}
