package gopherlua_test

import (
	"testing"
	"time"

	"github.com/lockgen/lockgen/lua"
)

// testdata/fairbeat1 holds fair_heartbeat and its prelude as they were
// before the heartbeat without TIME (issue 24): same protocol, same data,
// a heartbeat that reads TIME, checks its place with ZSCORE and gives up
// a place that ran out. During a rolling deploy both run on one queue:
// each decides for its own place only, and the old one's PEXPIREAT GT
// never shortens the TTLs a new refresh set.
func TestFairHeartbeatVersionsMix(t *testing.T) {
	protocolTargets(t, func(t *testing.T, tg target, keys []string, tol time.Duration) {
		old := versionScript(t, "fairbeat1", "fair_heartbeat")
		if sh, ok := tg.(*shimTarget); ok {
			if _, err := sh.srv.Load(old.Name, old.Source); err != nil {
				t.Fatalf("load %s in the shim: %v", old.Name, err)
			}
		}
		slack := tol.Milliseconds() + 50
		ev := func(s *lua.Script, args ...string) any { return tg.eval(s, keys, args) }
		queueTTL := func() int64 { v, _ := tg.do("PTTL", keys[1]).(int64); return v }
		kept := func(what string, got any) {
			if v, ok := got.(int64); !ok || v < 1 {
				t.Errorf("%s: %s: %#v, want the place kept", tg.name(), what, got)
			}
		}
		if _, ok := ev(lua.FairAcquire, "A", "10000", "PUBLISH").(int64); !ok {
			t.Fatalf("%s: acquire A: not granted", tg.name())
		}
		for _, w := range []string{"W", "V"} {
			if got := ev(lua.FairAcquire, w, "1000", "PUBLISH"); !isBusy(got) {
				t.Fatalf("%s: acquire %s: %#v, want busy", tg.name(), w, got)
			}
		}
		tg.advanceTo(100 * time.Millisecond)
		// A new refresh: the sets live 4 leases from now.
		kept("new heartbeat W with a refresh", ev(lua.FairHeartbeat, "W", "1000", "PUBLISH", "0", "1"))
		if ttl := queueTTL(); ttl < 4000-slack {
			t.Errorf("%s: queue PTTL %d after a new refresh, want about 4000", tg.name(), ttl)
		}
		kept("old heartbeat V", ev(old, "V", "1000", "PUBLISH"))
		if ttl := queueTTL(); ttl < 4000-slack {
			t.Errorf("%s: queue PTTL %d after an old heartbeat, want the refresh's 4000 kept", tg.name(), ttl)
		}
		// Both places ran out (at 1100 ms); nobody removed them.
		tg.advanceTo(1300 * time.Millisecond)
		if got := ev(old, "V", "1000", "PUBLISH"); got != int64(0) {
			t.Errorf("%s: old heartbeat V on its ran-out place: %#v, want 0 (it gives the place up)", tg.name(), got)
		}
		kept("new heartbeat W on its ran-out place", ev(lua.FairHeartbeat, "W", "1000", "PUBLISH", "0", "0"))
		if got := tg.do("ZRANGE", keys[1], "0", "-1"); !sameMembers(got, "W") {
			t.Errorf("%s: queue %#v, want W only", tg.name(), got)
		}
	})
}

// sameMembers reports whether a ZRANGE reply lists exactly members.
func sameMembers(got any, members ...string) bool {
	list, ok := got.([]any)
	if !ok || len(list) != len(members) {
		return false
	}
	for i, m := range members {
		if list[i] != m {
			return false
		}
	}
	return true
}
