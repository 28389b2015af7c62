package gopherlua_test

import (
	"crypto/sha1"
	"encoding/hex"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockgen/lockgen/lua"
	"github.com/lockgen/lockgen/redistest"
)

// A rolling deploy runs two lockgen versions against one key. Protocol 1
// (lockgen up to commit 8b07189) wrote the waiters flag of an exclusive
// lock as 0/1 and scored mutex registrations by their deadline; protocol 2
// writes -/+ and scores them by fence. Each version must refuse the
// other's lock values, change nothing when it does, and never grant a lock
// the other holds, nor leave a key neither can use.
//
// testdata/protocol1 holds protocol 1's scripts and prelude as they were.
// Each old script runs as the whole old prelude followed by its file (the
// prelude is only local definitions, so a script carrying helpers it does
// not use behaves the same).

const protocolErr = "ERR lockgen: lock written by lockgen protocol 1"
const oldRefusal = "ERR lockgen: unexpected lock value"

// oldScript loads protocol 1's script name from testdata.
func oldScript(t *testing.T, name string) *lua.Script {
	return versionScript(t, "protocol1", name)
}

// versionScript loads script name as an older lockgen had it, from
// testdata/<version>: its prelude followed by its file.
func versionScript(t *testing.T, version, name string) *lua.Script {
	t.Helper()
	prelude, err := os.ReadFile("testdata/" + version + "/prelude.lua")
	if err != nil {
		t.Fatal(err)
	}
	body, err := os.ReadFile("testdata/" + version + "/" + name + ".lua")
	if err != nil {
		t.Fatal(err)
	}
	src := string(prelude) + "\n" + string(body)
	sum := sha1.Sum([]byte(src))
	return &lua.Script{Name: version + "_" + name, Source: src, SHA1: hex.EncodeToString(sum[:])}
}

// mix is one protocol test on one target: old and new scripts of a family
// called on the keys of one lock.
type mix struct {
	t    *testing.T
	tg   target
	keys []string
	at   time.Duration
	tol  float64
	old  map[string]*lua.Script
	// still: the clock has moved for the call about to run (refused
	// reads the keys between the tick and the call).
	still bool
}

func newMix(t *testing.T, tg target, keys []string, tol time.Duration, oldNames ...string) *mix {
	m := &mix{t: t, tg: tg, keys: keys, tol: float64(tol.Milliseconds()), old: map[string]*lua.Script{}}
	for _, n := range oldNames {
		s := oldScript(t, n)
		if sh, ok := tg.(*shimTarget); ok {
			if _, err := sh.srv.Load(s.Name, s.Source); err != nil {
				t.Fatalf("load %s in the shim: %v", s.Name, err)
			}
		}
		m.old[n] = s
	}
	return m
}

// call runs s with holder, lease 1000 ms, PUBLISH and extra, 10 ms after
// the previous call.
func (m *mix) call(s *lua.Script, holder string, extra ...string) any {
	if !m.still {
		m.tick()
	}
	if s == lua.FairHeartbeat && extra == nil {
		extra = []string{"0", "1"} // the deadline by the server's TIME, a TTL refresh
	}
	return m.tg.eval(s, m.keys, append([]string{holder, "1000", "PUBLISH"}, extra...))
}

func (m *mix) tick() {
	m.at += 10 * time.Millisecond
	m.tg.advanceTo(m.at)
}

func (m *mix) oldCall(name, holder string, extra ...string) any {
	return m.call(m.old[name], holder, extra...)
}

// fence reads a bare fence reply (an exclusive lock's grant).
func (m *mix) fence(what string, got any) string {
	m.t.Helper()
	f, ok := got.(int64)
	if !ok || f <= 0 {
		m.t.Fatalf("%s: %s: reply %#v, want a fence", m.tg.name(), what, got)
	}
	return strconv.FormatInt(f, 10)
}

// refused: every call of calls fails with an error starting prefix, and
// no key changes (TTLs within the target's tolerance).
func (m *mix) refused(prefix string, calls map[string]func() any) {
	m.t.Helper()
	for what, c := range calls {
		m.tick()
		before := m.tg.snapshot(m.keys[:len(m.keys)-1])
		m.still = true
		got := c()
		m.still = false
		after := m.tg.snapshot(m.keys[:len(m.keys)-1])
		if e, ok := got.(replyError); !ok || !strings.HasPrefix(string(e), prefix) {
			m.t.Errorf("%s: %s: reply %#v, want an error starting %q", m.tg.name(), what, got, prefix)
		}
		if !sameKeys(before, after, m.tg.start(), m.tg.start(), m.tol) {
			m.t.Errorf("%s: %s changed the keys:\nbefore %v\nafter  %v", m.tg.name(), what, before, after)
		}
	}
}

// tombstoneAged waits until the lock's key, a tombstone just written with
// the floor as its TTL, is more than a ms old on the server's clock: in its
// first ms its PTTL is the whole floor, which lg_lease_left reads as a
// lease in its last ms, and a heartbeat as a holder's that runs. A tick
// is 10 ms on schedule, but a run that fell behind its schedule (a loaded
// machine) may make its next call in the same ms; then it ticks again.
func (m *mix) tombstoneAged() {
	m.t.Helper()
	floor := lua.FenceFloor.Milliseconds()
	for range 100 {
		if pttl, ok := m.tg.do("PTTL", m.keys[0]).(int64); !ok || pttl < floor {
			return
		}
		m.tick()
	}
	m.t.Fatalf("%s: the tombstone's PTTL stayed at the floor", m.tg.name())
}

// vanish makes the lock's key expire now, as it does lease + floor after
// a holder that died: the other keys (a mutex's registrations, a fair
// queue) may outlive it.
func (m *mix) vanish() {
	m.tg.do("PEXPIRE", m.keys[0], "1")
	m.at += 50 * time.Millisecond
	m.tg.advanceTo(m.at)
	if got := m.tg.do("PTTL", m.keys[0]); got != int64(-2) {
		m.t.Fatalf("%s: the lock's key still exists: %#v", m.tg.name(), got)
	}
}

// sound checks that the lock's key, if any, is no older than a lease
// and the floor: nothing a script wrote outlives what its lock needs.
func (m *mix) sound(what string) {
	m.t.Helper()
	for _, k := range m.tg.snapshot(m.keys[:1]) {
		if limit := (time.Second + lua.FenceFloor).Milliseconds(); k.PTTL < 0 || k.PTTL > limit {
			m.t.Errorf("%s: after %s, %s lives %d ms, more than a lease and the floor (%d ms): a key no lockgen can take",
				m.tg.name(), what, k, k.PTTL, limit)
		}
	}
}

// protocolTargets runs each protocol test on the shim and on one real
// redis-server, each on keys of its own.
func protocolTargets(t *testing.T, run func(t *testing.T, tg target, keys []string, tol time.Duration)) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	for _, name := range []string{"shim", "redis-server"} {
		t.Run(name, func(t *testing.T) {
			sc := &scenario{name: t.Name(), fam: mutexFamily}
			if strings.Contains(t.Name(), "Fair") {
				sc.fam = fairFamily
			}
			keys := sc.keyNames()
			if name == "shim" {
				tg := newShimTarget(t, []string{sc.wakeChannel()})
				defer tg.close()
				run(t, tg, keys, 0)
				return
			}
			tg := newRedisTarget(t, rdb, []string{sc.wakeChannel()}, false)
			defer tg.close()
			run(t, tg, keys, realTolerance)
		})
	}
}

// An old process holds a mutex (and a waiter of its protocol is
// registered): every new script refuses the lock, with the protocol error,
// and changes nothing; the old ones go on working; the old release's
// tombstone is refused too, until it expires.
func TestProtocolMutexOldHolds(t *testing.T) {
	protocolTargets(t, func(t *testing.T, tg target, keys []string, tol time.Duration) {
		m := newMix(t, tg, keys, tol, "mutex_acquire", "mutex_release", "mutex_renew")
		f := m.fence("old acquire", m.oldCall("mutex_acquire", "A", "500"))
		if got := m.oldCall("mutex_acquire", "W", "60000"); !isBusy(got) {
			t.Fatalf("%s: old acquire by W: %#v, want busy", tg.name(), got)
		}
		newCalls := map[string]func() any{
			"new acquire B":               func() any { return m.call(lua.MutexAcquire, "B", "500") },
			"new acquire B, tries once":   func() any { return m.call(lua.MutexAcquire, "B", "0") },
			"new acquire B, next waiter":  func() any { return m.call(lua.MutexAcquire, "B", "500", "C") },
			"new acquire by the holder":   func() any { return m.call(lua.MutexAcquire, "A", "500") },
			"new renew by the holder":     func() any { return m.call(lua.MutexRenew, "A") },
			"new release by the holder":   func() any { return m.call(lua.MutexRelease, "A", f) },
			"new release, no guess":       func() any { return m.call(lua.MutexRelease, "A") },
			"new release by a waiter":     func() any { return m.call(lua.MutexRelease, "W") },
			"new floor by the holder":     func() any { return m.call(lua.MutexFloor, "A", f) },
			"new force release":           func() any { return m.call(lua.MutexForce, "op") },
			"new inspect":                 func() any { return m.call(lua.MutexInspect, "op") },
			"new acquire W (old waiter)":  func() any { return m.call(lua.MutexAcquire, "W", "500") },
			"new release W (old waiter)":  func() any { return m.call(lua.MutexRelease, "W", f) },
			"new renew by another holder": func() any { return m.call(lua.MutexRenew, "B") },
		}
		m.refused(protocolErr, newCalls)
		if got := m.oldCall("mutex_renew", "A"); got != int64(1) {
			t.Errorf("%s: old renew after the new calls: %#v, want 1", tg.name(), got)
		}
		// The old release hands the lock to W (protocol 1's hand-over).
		if got, _ := m.oldCall("mutex_release", "A", f).(string); !strings.HasSuffix(got, ":W") {
			t.Errorf("%s: old release: %#v, want a grant to W", tg.name(), got)
		}
		if got := m.oldCall("mutex_release", "W"); got != int64(1) {
			t.Errorf("%s: old release by W: %#v, want 1", tg.name(), got)
		}
		m.refused(protocolErr, map[string]func() any{
			"new acquire on the old tombstone": func() any { return m.call(lua.MutexAcquire, "B", "500") },
			"new release on the old tombstone": func() any { return m.call(lua.MutexRelease, "B", f) },
		})
	})
}

// A new process holds a mutex (a new waiter registered): every old script
// refuses the lock and changes nothing; the new ones go on working; the
// new tombstone is refused by the old acquire.
func TestProtocolMutexNewHolds(t *testing.T) {
	protocolTargets(t, func(t *testing.T, tg target, keys []string, tol time.Duration) {
		m := newMix(t, tg, keys, tol, "mutex_acquire", "mutex_release", "mutex_renew")
		f := m.fence("new acquire", m.call(lua.MutexAcquire, "A", "500"))
		if got := m.call(lua.MutexAcquire, "X", "500"); !isBusy(got) {
			t.Fatalf("%s: new acquire by X: %#v, want busy", tg.name(), got)
		}
		m.refused(oldRefusal, map[string]func() any{
			"old acquire B":             func() any { return m.oldCall("mutex_acquire", "B", "500") },
			"old acquire B, tries once": func() any { return m.oldCall("mutex_acquire", "B", "0") },
			"old acquire by the holder": func() any { return m.oldCall("mutex_acquire", "A", "500") },
			"old renew by the holder":   func() any { return m.oldCall("mutex_renew", "A") },
			"old release by the holder": func() any { return m.oldCall("mutex_release", "A", f) },
			"old release, no guess":     func() any { return m.oldCall("mutex_release", "A") },
			"old release by a waiter":   func() any { return m.oldCall("mutex_release", "X") },
		})
		if got := m.call(lua.MutexRenew, "A"); got != int64(1) {
			t.Errorf("%s: new renew after the old calls: %#v, want 1", tg.name(), got)
		}
		if got, _ := m.call(lua.MutexRelease, "A", f).(string); !strings.HasSuffix(got, ":X") {
			t.Errorf("%s: new release: %#v, want an offer to X", tg.name(), got)
		}
		m.refused(oldRefusal, map[string]func() any{
			"old acquire on the offer": func() any { return m.oldCall("mutex_acquire", "B", "500") },
		})
		if got := m.call(lua.MutexRelease, "X"); got != int64(1) {
			t.Errorf("%s: new release by X: %#v, want 1", tg.name(), got)
		}
		m.refused(oldRefusal, map[string]func() any{
			"old acquire on the new tombstone": func() any { return m.oldCall("mutex_acquire", "B", "500") },
		})
	})
}

func isBusy(got any) bool {
	a, ok := got.([]any)
	return ok && len(a) >= 2 && a[0] == int64(0)
}

// Fair locks: the same refusals both ways. The queue's format did not
// change between the protocols; only the lock's value tells them apart.
func TestProtocolFairOldHolds(t *testing.T) {
	protocolTargets(t, func(t *testing.T, tg target, keys []string, tol time.Duration) {
		m := newMix(t, tg, keys, tol, "fair_acquire", "fair_release", "fair_renew", "fair_heartbeat")
		m.fence("old acquire", m.oldCall("fair_acquire", "A"))
		if got := m.oldCall("fair_acquire", "W"); !isBusy(got) {
			t.Fatalf("%s: old acquire by W: %#v, want busy", tg.name(), got)
		}
		// While the old holder's lease runs, a new heartbeat reads only its
		// TTL (one PTTL, no GET): it keeps W's place in the queue, whose
		// format both protocols share, and touches nothing else. Once the
		// lease has ended it reads the value, and refuses (below, the
		// tombstone).
		m.tick()
		lockBefore := m.tg.do("GET", keys[0])
		if got, ok := m.call(lua.FairHeartbeat, "W").(int64); !ok || got < 1 {
			t.Errorf("%s: new heartbeat W under an old holder: %#v, want the place kept", tg.name(), got)
		}
		if after := m.tg.do("GET", keys[0]); after != lockBefore {
			t.Errorf("%s: new heartbeat W changed the old lock: %#v, was %#v", tg.name(), after, lockBefore)
		}
		m.refused(protocolErr, map[string]func() any{
			"new acquire B":             func() any { return m.call(lua.FairAcquire, "B") },
			"new acquire by the holder": func() any { return m.call(lua.FairAcquire, "A") },
			"new acquire W (queued)":    func() any { return m.call(lua.FairAcquire, "W") },
			"new renew by the holder":   func() any { return m.call(lua.FairRenew, "A") },
			"new release by the holder": func() any { return m.call(lua.FairRelease, "A") },
			"new release W":             func() any { return m.call(lua.FairRelease, "W") },
			"new force release":         func() any { return m.call(lua.FairForce, "op") },
			"new inspect":               func() any { return m.call(lua.FairInspect, "op") },
		})
		if got, _ := m.oldCall("fair_release", "A").(string); !strings.HasSuffix(got, ":W") {
			t.Errorf("%s: old release: %#v, want a grant to W", tg.name(), got)
		}
		if got := m.oldCall("fair_release", "W"); got != int64(1) {
			t.Errorf("%s: old release by W: %#v, want 1", tg.name(), got)
		}
		m.tombstoneAged()
		m.refused(protocolErr, map[string]func() any{
			"new acquire on the old tombstone":   func() any { return m.call(lua.FairAcquire, "B") },
			"new heartbeat on the old tombstone": func() any { return m.call(lua.FairHeartbeat, "W") },
		})
	})
}

func TestProtocolFairNewHolds(t *testing.T) {
	protocolTargets(t, func(t *testing.T, tg target, keys []string, tol time.Duration) {
		m := newMix(t, tg, keys, tol, "fair_acquire", "fair_release", "fair_renew", "fair_heartbeat")
		m.fence("new acquire", m.call(lua.FairAcquire, "A"))
		if got := m.call(lua.FairAcquire, "X"); !isBusy(got) {
			t.Fatalf("%s: new acquire by X: %#v, want busy", tg.name(), got)
		}
		m.refused(oldRefusal, map[string]func() any{
			"old acquire B":             func() any { return m.oldCall("fair_acquire", "B") },
			"old acquire by the holder": func() any { return m.oldCall("fair_acquire", "A") },
			"old acquire X (queued)":    func() any { return m.oldCall("fair_acquire", "X") },
			"old renew by the holder":   func() any { return m.oldCall("fair_renew", "A") },
			"old heartbeat X":           func() any { return m.oldCall("fair_heartbeat", "X") },
			"old release by the holder": func() any { return m.oldCall("fair_release", "A") },
			"old release X":             func() any { return m.oldCall("fair_release", "X") },
		})
		if got, _ := m.call(lua.FairRelease, "A").(string); !strings.HasSuffix(got, ":X") {
			t.Errorf("%s: new release: %#v, want a grant to X", tg.name(), got)
		}
		m.refused(oldRefusal, map[string]func() any{
			"old acquire on X's grant": func() any { return m.oldCall("fair_acquire", "B") },
		})
		if got := m.call(lua.FairRelease, "X"); got != int64(1) {
			t.Errorf("%s: new release by X: %#v, want 1", tg.name(), got)
		}
		m.refused(oldRefusal, map[string]func() any{
			"old acquire on the new tombstone": func() any { return m.oldCall("fair_acquire", "B") },
		})
	})
}

// The mutex's registrations outlive its key: B:waiters lives 2 x lease +
// floor after its newest registration, the key lease + floor after its
// holder's last call. A registration left by one protocol (its waiter
// gone, as in a rollback or a deploy that stops both processes) then meets
// a holder of the other, which takes the absent key as free. Neither may
// hand the lock to the other protocol's registration.
//
// Protocol 1 scores a registration with its deadline in ms and takes any
// score above its clock as live; protocol 2's fences, in µs, lie far
// above: an old release would hand the lock to the new waiter until that
// "deadline", some 55,000 years on, a key neither protocol can ever take.
func TestProtocolMutexNewRegistrationLeftBehind(t *testing.T) {
	protocolTargets(t, func(t *testing.T, tg target, keys []string, tol time.Duration) {
		m := newMix(t, tg, keys, tol, "mutex_acquire", "mutex_release")
		m.fence("new acquire", m.call(lua.MutexAcquire, "N", "500"))
		if got := m.call(lua.MutexAcquire, "X", "500"); !isBusy(got) {
			t.Fatalf("%s: new acquire by X: %#v, want busy", tg.name(), got)
		}
		m.vanish()
		f := m.fence("old acquire of the absent key", m.oldCall("mutex_acquire", "O", "500"))
		got := m.oldCall("mutex_release", "O", f)
		if s, _ := got.(string); strings.HasSuffix(s, ":X") {
			t.Errorf("%s: the old release handed the lock to X, a protocol 2 registration: %#v", tg.name(), got)
		}
		m.sound("the old release")
	})
}

// Protocol 1's runtime takes a grant message to its waiter for the grant
// itself: a new release that offered the lock to an old registration
// would make that waiter believe it holds the lock, while the offer lapses
// in LG_OFFER_MS and a new process takes it.
func TestProtocolMutexOldRegistrationLeftBehind(t *testing.T) {
	protocolTargets(t, func(t *testing.T, tg target, keys []string, tol time.Duration) {
		m := newMix(t, tg, keys, tol, "mutex_acquire", "mutex_release")
		m.fence("old acquire", m.oldCall("mutex_acquire", "O", "500"))
		if got := m.oldCall("mutex_acquire", "W", "60000"); !isBusy(got) {
			t.Fatalf("%s: old acquire by W: %#v, want busy", tg.name(), got)
		}
		m.vanish()
		f := m.fence("new acquire of the absent key", m.call(lua.MutexAcquire, "N", "500"))
		got := m.call(lua.MutexRelease, "N", f)
		if s, _ := got.(string); strings.HasSuffix(s, ":W") {
			t.Errorf("%s: the new release offered the lock to W, a protocol 1 registration: %#v", tg.name(), got)
		}
		if v, _ := m.tg.do("GET", keys[0]).(string); strings.HasPrefix(v, "W ") {
			t.Errorf("%s: after the new release the lock is %q", tg.name(), v)
		}
		m.sound("the new release")
	})
}
