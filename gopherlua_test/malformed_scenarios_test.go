package gopherlua_test

import (
	"slices"
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

// badLockValues are string lock values (mutex, fair) that no script wrote:
// every script of the family must refuse them with "unexpected lock value".
var badLockValues = []string{
	"not a lock",
	"A 1 1700000000000000 2",
	"A x 1700000000000000 0",
}

// badHeirValues damage a mutex's heir fields ("<holder> <count> <fence> 1
// <heir> <until>").
var badHeirValues = []string{
	"A 1 1700000000000000 1 B",                 // until missing
	"A 1 1700000000000000 1 B x",               // until not a number
	"A 1 1700000000000000 1 B -1700000000000",  // until with a sign
	"A 1 1700000000000000 0 B 1700000000000",   // an heir on an unmarked lock
	"A 1 1700000000000000 1 B 1700000000000 C", // a field too many
	"A 1 1700000000000000 1  B 1700000000000",  // two spaces
	"A 1 1700000000000000 1 B 1700000000000 ",  // trailing space
}

// malformedScenarios: for every family, a lock is held, then every script
// of the family (every script of package lua whose name has the family's
// prefix) gets every malformed ARGV, too few KEYS, and (for string locks)
// damaged values; each must fail and leave every key as it was.
func malformedScenarios() []*scenario {
	type fam struct {
		f      family
		take   *lua.Script
		extra  []string
		damage []string // string lock values the scripts must refuse
	}
	fams := []fam{
		{mutexFamily, lua.MutexAcquire, nil, slices.Concat(badLockValues, badHeirValues)},
		{fairFamily, lua.FairAcquire, nil, badLockValues},
		{rwFamily, lua.WriteAcquire, nil, nil},
		{semFamily, lua.SemaphoreAcquire, []string{"1"}, nil},
	}
	var out []*scenario
	for _, fm := range fams {
		sc := &scenario{name: "malformed-" + fm.f.name, fam: fm.f}
		sc.steps = append(sc.steps, step{at: 0, script: fm.take, holder: "A", lease: 5000 * ms, extra: fm.extra, want: granted()})
		at := 10 * ms
		for _, s := range fm.f.scripts() {
			for _, args := range badArgv {
				a := append([]string(nil), args...)
				if s == lua.SemaphoreAcquire && len(a) == 3 {
					a = append(a, "2")
				}
				sc.steps = append(sc.steps, step{at: at, script: s, args: a, want: fails("ERR lockgen:"), unchanged: true})
			}
			good := []string{"A", "1000", "PUBLISH"}
			if s == lua.MutexAcquire {
				// ARGV[4] is absent, "once", "retry" or "waited", spelt so.
				for _, a4 := range []string{"maybe", "", "x", "RETRY", "Waited", "once ", "retried"} {
					sc.steps = append(sc.steps, step{at: at, script: s, args: append(good, a4), want: fails("ERR lockgen:"), unchanged: true})
				}
			}
			if s == lua.FairAcquire {
				// ARGV[4] is absent or "waited"; "once" and "retry" are the mutex's only.
				for _, a4 := range []string{"maybe", "", "WAITED", "once", "retry"} {
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
		b := sc.keyNames()[0]
		for _, v := range fm.damage {
			sc.steps = append(sc.steps, step{at: at, raw: []string{"SET", b, v, "PX", "5000"}, want: isOK()})
			for _, s := range fm.f.scripts() {
				kinds := [][]string{nil} // every ARGV[4] the script takes
				switch s {
				case lua.MutexAcquire:
					kinds = append(kinds, []string{"once"}, []string{"retry"}, []string{"waited"})
				case lua.FairAcquire:
					kinds = append(kinds, []string{"waited"})
				}
				// The holder in the value, its heir and a stranger alike.
				for _, h := range []string{"A", "B", "C"} {
					for _, a4 := range kinds {
						sc.steps = append(sc.steps, step{at: at, script: s, holder: h, lease: 1000 * ms, extra: a4,
							want: fails("ERR lockgen: unexpected lock value"), unchanged: true})
					}
				}
			}
			at += 10 * ms
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
