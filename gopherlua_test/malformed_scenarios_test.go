package gopherlua_test

import (
	"strings"

	"github.com/lockgen/lockgen/lua"
)

// badArgv lists malformed ARGV every script must refuse with an
// "ERR lockgen:" error before writing anything.
var badArgv = [][]string{
	{"", "1000", "PUBLISH"},                      // empty holder
	{"a b", "1000", "PUBLISH"},                   // holder with a space
	{"{tag}", "1000", "PUBLISH"},                 // holder with braces
	{strings.Repeat("h", 65), "1000", "PUBLISH"}, // holder too long
	{"A", "0", "PUBLISH"},                        // lease zero
	{"A", "-5", "PUBLISH"},                       // lease negative
	{"A", "1.5", "PUBLISH"},                      // lease not an integer
	{"A", "2147483649", "PUBLISH"},               // lease above 2^31
	{"A", "99999999999", "PUBLISH"},              // lease far too long
	{"A", "1000", "EVAL"},                        // not a publish command
	{"A", "1000"},                                // publish command missing
}

// malformedScenarios: for every family, a lock is held, then every script
// of the family gets every malformed ARGV, too few KEYS, and (for string
// locks) a damaged value; each must fail and leave every key as it was.
func malformedScenarios() []*scenario {
	type fam struct {
		f       family
		take    *lua.Script
		extra   []string
		scripts []*lua.Script
		damage  bool // the lock is a string whose damage scripts must refuse
	}
	fams := []fam{
		{mutexFamily, lua.MutexAcquire, nil, []*lua.Script{lua.MutexAcquire, lua.MutexRenew, lua.MutexRelease}, true},
		{fairFamily, lua.FairAcquire, nil, []*lua.Script{lua.FairAcquire, lua.FairRenew, lua.FairRelease, lua.FairLeave, lua.FairHeartbeat}, true},
		{rwFamily, lua.WriteAcquire, nil, []*lua.Script{lua.ReadAcquire, lua.ReadRenew, lua.ReadRelease, lua.WriteAcquire, lua.WriteRenew, lua.WriteRelease, lua.WriteLeave}, false},
		{semFamily, lua.SemaphoreAcquire, []string{"1"}, []*lua.Script{lua.SemaphoreAcquire, lua.SemaphoreRenew, lua.SemaphoreRelease}, false},
	}
	var out []*scenario
	for _, fm := range fams {
		sc := &scenario{name: "malformed-" + fm.f.name, fam: fm.f}
		sc.steps = append(sc.steps, step{at: 0, script: fm.take, holder: "A", lease: 5000 * ms, extra: fm.extra, want: granted()})
		at := 10 * ms
		for _, s := range fm.scripts {
			for _, args := range badArgv {
				a := append([]string(nil), args...)
				if s == lua.SemaphoreAcquire && len(a) == 3 {
					a = append(a, "2")
				}
				sc.steps = append(sc.steps, step{at: at, script: s, args: a, want: fails("ERR lockgen:"), unchanged: true})
			}
			good := []string{"A", "1000", "PUBLISH"}
			if s == lua.MutexAcquire {
				sc.steps = append(sc.steps, step{at: at, script: s, args: append(good, "maybe"), want: fails("ERR lockgen:"), unchanged: true})
			}
			if s == lua.FairAcquire {
				// ARGV[4] is absent or "waited"; "once" is the mutex's only.
				for _, a4 := range []string{"maybe", "", "WAITED", "once"} {
					sc.steps = append(sc.steps, step{at: at, script: s, args: append(good, a4), want: fails("ERR lockgen:"), unchanged: true})
				}
			}
			if s == lua.SemaphoreAcquire {
				for _, permits := range []string{"0", "x", ""} {
					sc.steps = append(sc.steps, step{at: at, script: s, args: append(good, permits), want: fails("ERR lockgen:"), unchanged: true})
				}
				sc.steps = append(sc.steps, step{at: at, script: s, args: good, want: fails("ERR lockgen:"), unchanged: true})
			}
			sc.steps = append(sc.steps, step{at: at, script: s, keys: sc.keyNames()[:1], args: good, want: fails("ERR lockgen:"), unchanged: true})
			at += 10 * ms
		}
		if fm.damage {
			b := sc.keyNames()[0]
			sc.steps = append(sc.steps, step{at: at, raw: []string{"SET", b, "not a lock", "PX", "5000"}, want: isOK()})
			for _, s := range fm.scripts {
				sc.steps = append(sc.steps, step{at: at + 10*ms, script: s, holder: "A", lease: 1000 * ms, want: fails("ERR lockgen:"), unchanged: true})
			}
		}
		out = append(out, sc)
	}
	return out
}

func isOK() check {
	return func(r *run, st *step, got any) error {
		if got != "OK" {
			return errorf("reply %#v, want OK", got)
		}
		return nil
	}
}
