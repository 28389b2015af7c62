package gopherlua_test

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	kinds "github.com/lockgen/lockgen/internal/family"
	"github.com/lockgen/lockgen/lua"
)

// family names the KEYS of one lock family, in the order the scripts take
// them (docs/design.md, "Script protocol"); the last one is the wake channel.
// ops are the prefixes of its scripts' names.
type family struct {
	name     string
	suffixes []string
	ops      []string
	// floored are the suffixes of the keys that keep the last fence: they
	// live lua.FenceFloor past what the lock needs them for.
	floored []string
}

// The lock families' names and KEYS come from the table the runtime uses
// (internal/family).
var (
	mutexFamily = family{kinds.Mutex.Family, kinds.Mutex.Keys(), []string{"mutex_"}, []string{""}}
	fairFamily  = family{kinds.Fair.Family, kinds.Fair.Keys(), []string{"fair_"}, []string{""}}
	rwFamily    = family{kinds.Write.Family, kinds.Write.Keys(), []string{"read_", "write_", "rw_"}, []string{"", ":readers"}}
	semFamily   = family{kinds.Semaphore.Family, kinds.Semaphore.Keys(), []string{"semaphore_"}, []string{"", ":holds"}}

	families = []family{mutexFamily, fairFamily, rwFamily, semFamily, latchFamily}
)

// scripts returns every script of the family (lua.All, so a script added
// to package lua is picked up), sorted by name.
func (f family) scripts() []*lua.Script {
	var out []*lua.Script
	for _, s := range lua.All() {
		for _, op := range f.ops {
			if strings.HasPrefix(s.Name, op) {
				out = append(out, s)
			}
		}
	}
	return out
}

// scenario is a story told to one lock: steps at offsets of a clock that
// starts when the scenario starts.
type scenario struct {
	name string
	fam  family
	// shimOnly marks a scenario that needs two steps at the very same
	// instant (a real clock always moves between two calls), such as a
	// release in the microsecond of the grant.
	shimOnly bool
	// sharded publishes with SPUBLISH (as on Redis Cluster); the real
	// server's subscriber then uses SSUBSCRIBE.
	sharded bool
	steps   []step
	// wakes is every payload expected on the wake channel, in order; none
	// other may be published. grantWake(h) stands for "grant:<fence>:h"
	// with any fence (fences come from the clock): the fences of grant
	// messages must rise, and every hand-over a step saw in the keys
	// (keyWant.handed) must be announced with its own fence.
	wakes []string
}

// step is one script call (or one plain command) and what must follow.
type step struct {
	at     time.Duration
	script *lua.Script
	holder string
	lease  time.Duration
	extra  []string // ARGV after the publish command (mutex window, semaphore permits)
	// extraAt replaces extra with ARGV computed from the target's start
	// (mutex_floor's fence floor, an absolute time in µs).
	extraAt func(start time.Time) []string
	// ownFence puts the fence of the holder's grant ("0" if none was
	// seen) before extra, as the runtime sends it to mutex_release.
	ownFence bool
	args     []string // replaces the whole ARGV (malformed input)
	keys     []string // replaces KEYS (malformed input)
	raw      []string // a plain command instead of a script
	// ahead, instead of a script: leave in B the fence floor that a
	// release on a master whose clock runs this far ahead would have left
	// (a fence ahead of the target's clock), as if the lock had just
	// failed over from there; it becomes the last fence seen.
	ahead time.Duration
	pub   string // PUBLISH unless set

	want      check     // reply check; nil: anything
	expect    []keyWant // key state after the step
	unchanged bool      // every key exactly as before the step
	// leaseOnly: every key as before the step but for B's TTL (an
	// idempotent acquire or a renew of a string lock restarts the lease and
	// changes nothing else).
	leaseOnly bool
}

// tolerance is how far a time-valued number (fence offset, wait_ms, PTTL,
// deadline) from the real server may lie from the expected value or from the
// shim's: the real run sleeps until each step's offset and two engineers'
// test runs share two cores, so a step can start late by scheduling noise.
// The shim's virtual clock is exact.
const realTolerance = 250 * time.Millisecond

// run is the state of one scenario on one target.
type run struct {
	sc        *scenario
	tg        target
	tol       int64 // ms
	lastFence int64
	fences    map[string]int64 // holder/side -> fence of its current grant
	// grantedTo is every fence seen granted (or offered) to a holder,
	// fence -> holder/side: a mutex claim's "taken:<fence>" must name one.
	grantedTo map[int64]string
	handed    []string // "grant:<fence>:<holder>" of each hand-over seen in the keys
	replied   []string // the same, as releases replied them (handedTo)
	step      int
}

type check func(r *run, st *step, got any) error

// stepResult is what the differential comparison looks at.
type stepResult struct {
	reply any
	keys  []keyState
}

func (sc *scenario) keyNames() []string {
	base := "lockgen:" + sc.fam.name + ":{" + sc.name + "}"
	out := make([]string, len(sc.fam.suffixes))
	for i, s := range sc.fam.suffixes {
		out[i] = base + s
	}
	return out
}

func (sc *scenario) dataKeys() []string {
	k := sc.keyNames()
	return k[:len(k)-1]
}

func (sc *scenario) wakeChannel() string {
	k := sc.keyNames()
	return k[len(k)-1]
}

// reporter is what play reports to: a *testing.T, or a recorder of a real
// run that may be replayed (playOnRedis).
type reporter interface {
	Helper()
	Errorf(format string, args ...any)
}

// play runs sc on tg, checking every expectation, and returns the trace.
func play(t reporter, sc *scenario, tg target, tol time.Duration) []stepResult {
	t.Helper()
	r := &run{sc: sc, tg: tg, tol: tol.Milliseconds(), fences: map[string]int64{}, grantedTo: map[int64]string{}}
	trace := make([]stepResult, 0, len(sc.steps))
	for i := range sc.steps {
		st := &sc.steps[i]
		r.step = i
		tg.advanceTo(st.at)
		var before []keyState
		if st.unchanged || st.leaseOnly {
			before = tg.snapshot(sc.dataKeys())
		}
		got := r.exec(st)
		if st.want != nil {
			if err := st.want(r, st, got); err != nil {
				t.Errorf("%s: %s step %d (%s at %v): %v", tg.name(), sc.name, i, st.label(), st.at, err)
			}
		}
		after := tg.snapshot(sc.dataKeys())
		if st.leaseOnly {
			before = withLockTTL(before, after, sc.keyNames()[0])
		}
		if (st.unchanged || st.leaseOnly) && !sameKeys(before, after, tg.start(), tg.start(), float64(r.tol)) {
			t.Errorf("%s: %s step %d (%s): keys changed:\nbefore %v\nafter  %v", tg.name(), sc.name, i, st.label(), before, after)
		}
		if st.raw == nil {
			for _, k := range after {
				if k.PTTL < 0 {
					t.Errorf("%s: %s step %d (%s at %v): %s has no TTL", tg.name(), sc.name, i, st.label(), st.at, k.Key)
				}
			}
		}
		for _, kw := range st.expect {
			if err := kw.verify(r, after); err != nil {
				t.Errorf("%s: %s step %d (%s at %v): key %q: %v", tg.name(), sc.name, i, st.label(), st.at, kw.suffix, err)
			}
		}
		trace = append(trace, stepResult{reply: got, keys: after})
	}
	msgs := tg.messages(sc.wakeChannel(), len(sc.wakes))
	if err := r.matchWakes(msgs); err != nil {
		t.Errorf("%s: %s: wake messages %q, want %q: %v", tg.name(), sc.name, msgs, sc.wakes, err)
	}
	return trace
}

// withLockTTL returns before with the TTL that key has in after: what a
// step that only restarts the lease of lock key may change.
func withLockTTL(before, after []keyState, key string) []keyState {
	out := append([]keyState(nil), before...)
	for i := range out {
		for _, a := range after {
			if out[i].Key == key && a.Key == key {
				out[i].PTTL, out[i].At = a.PTTL, a.At
			}
		}
	}
	return out
}

// grantPattern starts a wanted wake message that matches a hand-over (fair
// or mutex) to the holder that follows it, whatever the fence.
const grantPattern = "grant:*:"

// grantWake is the wanted wake message of a lock handed to holder.
func grantWake(holder string) string { return grantPattern + holder }

// takenPattern starts a wanted wake message that matches the claim of a
// mutex offer (or any acquire of a lock whose waiters flag is set) by the
// holder that follows it: "taken:<fence>", fence being one granted or
// offered to that holder earlier in the scenario.
const takenPattern = "taken:*:"

// takenWake is the wanted wake message of holder's claim.
func takenWake(holder string) string { return takenPattern + holder }

// setFence records fence as the fence of side's current grant.
func (r *run) setFence(side string, fence int64) {
	r.fences[side] = fence
	if r.grantedTo == nil {
		r.grantedTo = map[int64]string{}
	}
	r.grantedTo[fence] = side
}

// parseGrant splits "grant:<fence>:<holder>" (holder ids may contain ':').
func parseGrant(msg string) (fence int64, holder string, ok bool) {
	rest, ok := strings.CutPrefix(msg, "grant:")
	if !ok {
		return 0, "", false
	}
	f, holder, ok := strings.Cut(rest, ":")
	if !ok || holder == "" {
		return 0, "", false
	}
	fence, err := strconv.ParseInt(f, 10, 64)
	if err != nil || fence <= 0 || strconv.FormatInt(fence, 10) != f {
		return 0, "", false
	}
	return fence, holder, true
}

// matchWakes checks the published messages against the scenario's wakes.
func (r *run) matchWakes(msgs []string) error {
	want := r.sc.wakes
	if len(msgs) != len(want) {
		return fmt.Errorf("%d messages, want %d", len(msgs), len(want))
	}
	var last int64
	for i, m := range msgs {
		if holder, ok := strings.CutPrefix(want[i], takenPattern); ok {
			f, _ := strings.CutPrefix(m, "taken:")
			fence, err := strconv.ParseInt(f, 10, 64)
			if !strings.HasPrefix(m, "taken:") || err != nil || strconv.FormatInt(fence, 10) != f {
				return fmt.Errorf("message %d is %q, want taken:<fence>", i, m)
			}
			if side := r.grantedTo[fence]; side != holder+"/"+r.sc.fam.name {
				return fmt.Errorf("message %d is %q: fence %d was granted to %q, want %s", i, m, fence, side, holder)
			}
			continue
		}
		holder, pattern := strings.CutPrefix(want[i], grantPattern)
		if !pattern {
			if m != want[i] {
				return fmt.Errorf("message %d is %q, want %q", i, m, want[i])
			}
			continue
		}
		fence, h, ok := parseGrant(m)
		if !ok || h != holder {
			return fmt.Errorf("message %d is %q, want grant:<fence>:%s", i, m, holder)
		}
		if fence <= last {
			return fmt.Errorf("message %d: grant fence %d not above the previous grant's %d", i, fence, last)
		}
		last = fence
	}
	for _, h := range r.handed {
		if !slices.Contains(msgs, h) {
			return fmt.Errorf("the hand-over seen in the keys, %q, was not announced", h)
		}
	}
	for _, h := range r.replied {
		if !slices.Contains(msgs, h) {
			return fmt.Errorf("a release replied %q, which was not announced", h)
		}
	}
	return nil
}

// side names the hold a step's holder takes: a holder may read and write
// the same lock, each with its own fence.
func (st *step) side() string {
	op, _, _ := strings.Cut(st.script.Name, "_")
	return st.holder + "/" + op
}

func (st *step) label() string {
	if st.ahead != 0 {
		return "floor planted " + st.ahead.String() + " ahead"
	}
	if st.raw != nil {
		return strings.Join(st.raw, " ")
	}
	return st.script.Name + " " + st.holder
}

func (r *run) exec(st *step) any {
	if st.ahead != 0 {
		return r.plantFloor(st)
	}
	if st.raw != nil {
		return r.tg.do(st.raw...)
	}
	keys := st.keys
	if keys == nil {
		keys = r.sc.keyNames()
	}
	args := st.args
	if args == nil {
		pub := st.pub
		if pub == "" && r.sc.sharded {
			pub = "SPUBLISH"
		}
		if pub == "" {
			pub = "PUBLISH"
		}
		extra := st.extra
		if st.extraAt != nil {
			extra = st.extraAt(r.tg.start())
		}
		if extra == nil && st.script == lua.FairHeartbeat {
			// As the runtime sends it: the deadline a lease from now on
			// the server's clock (here exact), and a TTL refresh.
			extra = heartbeatArgs(r.tg.start(), st.at+st.lease, true)
		}
		if st.ownFence {
			extra = append([]string{strconv.FormatInt(r.fences[st.side()], 10)}, st.extra...)
		}
		args = append([]string{st.holder, strconv.FormatInt(st.lease.Milliseconds(), 10), pub}, extra...)
	}
	return r.tg.eval(st.script, keys, args)
}

// plantFloor writes what a release on a master st.ahead ahead of the
// target's clock leaves: a tombstone (mutex, fair) or a hash holding only f
// (read/write, semaphore), living until that fence plus the floor.
func (r *run) plantFloor(st *step) any {
	fence := r.tg.start().Add(st.at + st.ahead).UnixMicro()
	f := strconv.FormatInt(fence, 10)
	ttl := strconv.FormatInt((st.ahead + lua.FenceFloor).Milliseconds(), 10)
	b := r.sc.keyNames()[0]
	r.lastFence = fence
	if r.sc.fam.name == rwFamily.name || r.sc.fam.name == semFamily.name {
		r.tg.do("DEL", b)
		r.tg.do("HSET", b, "f", f)
		return r.tg.do("PEXPIRE", b, ttl)
	}
	return r.tg.do("SET", b, tombstone+" "+f+" -", "PX", ttl)
}

// Reply checks.

func pair(got any) (int64, int64, error) {
	a, ok := got.([]any)
	if !ok || len(a) != 2 {
		return 0, 0, fmt.Errorf("reply %#v, want a pair", got)
	}
	x, ok1 := a[0].(int64)
	y, ok2 := a[1].(int64)
	if !ok1 || !ok2 {
		return 0, 0, fmt.Errorf("reply %#v, want two integers", got)
	}
	return x, y, nil
}

// grantFence reads a grant: the bare fence (the exclusive scripts) or
// {1, fence} (the shared ones).
func grantFence(got any) (int64, error) {
	if fence, ok := got.(int64); ok {
		if fence <= 0 {
			return 0, fmt.Errorf("reply %d, want a positive fence", fence)
		}
		return fence, nil
	}
	ok, fence, err := pair(got)
	if err != nil {
		return 0, err
	}
	if ok != 1 {
		return 0, fmt.Errorf("reply %v, want granted", got)
	}
	return fence, nil
}

// granted: a new grant whose fence is above every fence seen before.
func granted() check {
	return func(r *run, st *step, got any) error {
		fence, err := grantFence(got)
		if err != nil {
			return err
		}
		if fence <= r.lastFence {
			return fmt.Errorf("fence %d not above the last fence %d", fence, r.lastFence)
		}
		r.lastFence = fence
		r.setFence(st.side(), fence)
		return nil
	}
}

// sameGrant: the fence of the grant the holder already has
// (seen by an earlier granted() or keyWant.handed): an acquire that finds
// the lock its own is the same grant seen again, a retried or duplicated
// call or a hand-over whose message the caller missed, never a new hold.
func sameGrant() check {
	return func(r *run, st *step, got any) error {
		fence, err := grantFence(got)
		if err != nil {
			return err
		}
		want := r.fences[st.side()]
		if want == 0 {
			return fmt.Errorf("no earlier grant to %s seen (granted or keyWant.handed)", st.side())
		}
		if fence != want {
			return fmt.Errorf("reply %v, want the fence of its grant, %d", got, want)
		}
		return nil
	}
}

// busy: refused, retry within about ms (±tolerance on the real server).
// The reply may name the holder (busyBy checks it).
func busy(ms int64) check {
	return func(r *run, st *step, got any) error {
		a, ok := got.([]any)
		if !ok || len(a) < 2 || len(a) > 5 {
			return fmt.Errorf("reply %#v, want {0, wait_ms[, holder[, left_ms[, now_ms]]]}", got)
		}
		if len(a) == 5 {
			// fair_acquire: the server clock, for the waiter's heartbeats.
			now, ok := a[4].(int64)
			if d := now - r.tg.start().Add(st.at).UnixMilli(); !ok || d > r.tol || -d > r.tol {
				return fmt.Errorf("reply %v: now_ms not the server clock at the step", got)
			}
		}
		flag, ok1 := a[0].(int64)
		wait, ok2 := a[1].(int64)
		if !ok1 || !ok2 || flag != 0 {
			return fmt.Errorf("reply %v, want busy {0, wait_ms, ...}", got)
		}
		if wait < 1 || wait > st.lease.Milliseconds() {
			return fmt.Errorf("wait %d ms outside 1..lease", wait)
		}
		if d := wait - ms; d > r.tol || -d > r.tol {
			return fmt.Errorf("wait %d ms, want %d ms", wait, ms)
		}
		return nil
	}
}

// handedTo: a release that handed the lock on to holder replies with the
// wake message it published, "grant:<fence>:<holder>", whose fence is above
// every fence seen before (matchWakes checks that it was published).
func handedTo(holder string) check {
	return func(r *run, st *step, got any) error {
		msg, _ := got.(string)
		fence, h, ok := parseGrant(msg)
		switch {
		case !ok || h != holder:
			return fmt.Errorf("reply %#v, want \"grant:<fence>:%s\"", got, holder)
		case fence <= r.lastFence:
			return fmt.Errorf("reply %q: fence not above the last fence %d", msg, r.lastFence)
		}
		r.replied = append(r.replied, msg)
		return nil
	}
}

func integer(n int64) check {
	return func(r *run, st *step, got any) error {
		if g, ok := got.(int64); !ok || g != n {
			return fmt.Errorf("reply %#v, want %d", got, n)
		}
		return nil
	}
}

// kept: fair_heartbeat kept the place; its reply, the ms until the lock's
// lease ends at the latest, is at least 1 and at most the lease.
func kept() check {
	return func(r *run, st *step, got any) error {
		if g, ok := got.(int64); !ok || g < 1 || g > st.lease.Milliseconds() {
			return fmt.Errorf("reply %#v, want 1..%d (place kept)", got, st.lease.Milliseconds())
		}
		return nil
	}
}

// keptFor: kept, and the lock's lease ends in ms (within the run's
// tolerance either way: on a real server the step that set the lease may
// have run late, or this one).
func keptFor(ms int64) check {
	return func(r *run, st *step, got any) error {
		// PTTL rounds to the ms: 1 off is the same moment.
		if g, ok := got.(int64); !ok || g < 1 || g > st.lease.Milliseconds() || g > ms+r.tol+1 || g < ms-r.tol-1 {
			return fmt.Errorf("reply %#v, want %d (place kept, the lock's lease ends then)", got, ms)
		}
		return nil
	}
}

func fails(prefix string) check {
	return func(r *run, st *step, got any) error {
		if e, ok := got.(replyError); !ok || !strings.HasPrefix(string(e), prefix) {
			return fmt.Errorf("reply %#v, want an error starting %q", got, prefix)
		}
		return nil
	}
}

// keyWant is an expectation on one key after a step.
type keyWant struct {
	suffix string
	absent bool
	// ttl: PTTL about this (within tolerance); 0: unchecked. For a key
	// that keeps the fence (family.floored) it is what the lock needs:
	// the rest of the lease, or of the tombstone's wait for the clock to
	// pass the fence; the key lives lua.FenceFloor longer.
	ttl time.Duration
	// floorOnly: a key that keeps the fence (family.floored) lives the
	// fence floor and no longer: a tombstone, or a shared lock's hash
	// holding only f.
	floorOnly bool
	// holder: the string lock (mutex, fair) is "<holder> <fence>
	// <waiters>" with this holder and the fence of its grant, or the
	// tombstone "! <last fence> 0" for holder tombstone.
	holder string
	// waiters: the string lock's waiters flag, "0" or "1"; "": unchecked.
	waiters string
	// handed: the string lock was just handed to holder (fair or mutex
	// hand-over): its fence must be above every fence seen before; it
	// becomes the fence of holder's grant (for sameGrant) and must be
	// announced by a grant message.
	handed  bool
	members []string // zset: members in score order
	// under: mutex B:waiters: the score of each member (in the order of
	// members) is the fence of this holder's grant, the fence under which
	// the member registered, minus scoreBase.
	under []string
	// deadlines: zset: the score of each member (in the order of members)
	// as ms after the scenario's start, within tolerance.
	deadlines []time.Duration
	fields    []string // hash: field names
	// fenced: a shared lock's hash: f is the last fence, and every hold in
	// it (r:<holder>, h:<holder>, the writer in w) carries the fence its
	// holder was granted.
	fenced bool
}

// scoreBase is LG_SCORE_BASE: a mutex registration is scored with its
// fence minus 2^53.
const scoreBase = 1 << 53

// tombstone is the holder of a string lock kept only for its fence.
const tombstone = "!"

func (kw keyWant) verify(r *run, keys []keyState) error {
	name := r.sc.keyNames()[0] + kw.suffix
	var ks *keyState
	for i := range keys {
		if keys[i].Key == name {
			ks = &keys[i]
		}
	}
	if kw.absent {
		if ks != nil {
			return fmt.Errorf("exists (%v), want absent", *ks)
		}
		return nil
	}
	if ks == nil {
		return fmt.Errorf("absent")
	}
	if ks.PTTL < 0 {
		return fmt.Errorf("has no TTL: %v", *ks)
	}
	if kw.ttl > 0 || kw.floorOnly {
		want := kw.ttl.Milliseconds()
		if slices.Contains(r.sc.fam.floored, kw.suffix) {
			want += lua.FenceFloor.Milliseconds()
		}
		if d := ks.PTTL - want; d > r.tol || -d > r.tol {
			return fmt.Errorf("PTTL %d ms, want about %d", ks.PTTL, want)
		}
	}
	if kw.holder != "" {
		if err := kw.verifyLock(r, ks.Value); err != nil {
			return err
		}
	}
	if err := kw.verifyZSet(r, ks.ZSet); err != nil {
		return err
	}
	if kw.fields != nil {
		var got []string
		for f := range ks.Hash {
			got = append(got, f)
		}
		sort.Strings(got)
		want := append([]string(nil), kw.fields...)
		sort.Strings(want)
		if !reflect.DeepEqual(got, want) {
			return fmt.Errorf("fields %q, want %q", got, want)
		}
	}
	if kw.fenced {
		return verifyHolds(r, ks.Hash)
	}
	return nil
}

// verifyLock checks a string lock value "<holder> <fence> <waiters>".
func (kw keyWant) verifyLock(r *run, value string) error {
	f := strings.Split(value, " ")
	if len(f) != 3 || f[0] != kw.holder || (f[2] != "-" && f[2] != "+") {
		return fmt.Errorf("value %q, want \"%s <fence> <-|+>\"", value, kw.holder)
	}
	// Scenarios spell the waiters flag 0 and 1, as protocol 1 wrote it;
	// protocol 2 writes - and +.
	f[2] = map[string]string{"-": "0", "+": "1"}[f[2]]
	fence, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil || fence <= 0 || strconv.FormatInt(fence, 10) != f[1] {
		return fmt.Errorf("value %q: the fence is not a positive integer", value)
	}
	if kw.waiters != "" && f[2] != kw.waiters {
		return fmt.Errorf("value %q, want the waiters flag %s", value, kw.waiters)
	}
	side := kw.holder + "/" + r.sc.fam.name
	switch {
	case kw.handed:
		if fence <= r.lastFence {
			return fmt.Errorf("value %q: fence not above the last fence %d", value, r.lastFence)
		}
		r.lastFence = fence
		r.setFence(side, fence)
		r.handed = append(r.handed, "grant:"+f[1]+":"+kw.holder)
	case kw.holder == tombstone:
		if fence != r.lastFence {
			return fmt.Errorf("tombstone %q, want \"! %d <-|+>\" (the last fence)", value, r.lastFence)
		}
	case r.fences[side] != 0 && fence != r.fences[side]:
		return fmt.Errorf("value %q, want the fence of %s's grant, %d", value, kw.holder, r.fences[side])
	}
	return nil
}

// verifyZSet checks the members of a sorted set and their scores.
func (kw keyWant) verifyZSet(r *run, zs []zmember) error {
	if kw.members != nil {
		var got []string
		for _, m := range zs {
			got = append(got, m.Member)
		}
		if !reflect.DeepEqual(got, kw.members) {
			return fmt.Errorf("members %q, want %q", got, kw.members)
		}
	}
	if kw.under != nil {
		if len(zs) != len(kw.under) {
			return fmt.Errorf("%d members, want %d registered under a holder", len(zs), len(kw.under))
		}
		for i, m := range zs {
			want := r.fences[kw.under[i]+"/"+r.sc.fam.name]
			if want == 0 || int64(m.Score) != want-scoreBase {
				return fmt.Errorf("%s's score is %.0f, want the fence of %s's grant (%d) - 2^53", m.Member, m.Score, kw.under[i], want)
			}
		}
	}
	if kw.deadlines == nil {
		return nil
	}
	if len(zs) != len(kw.deadlines) {
		return fmt.Errorf("%d members, want %d deadlines", len(zs), len(kw.deadlines))
	}
	for i, m := range zs {
		at, want := int64(m.Score)-r.tg.start().UnixMilli(), kw.deadlines[i].Milliseconds()
		if d := at - want; d > r.tol || -d > r.tol {
			return fmt.Errorf("%s's score lies %d ms after the start, want about %d", m.Member, at, want)
		}
	}
	return nil
}

// verifyHolds checks that a shared lock's hash holds the last fence in f
// and, for every holder, the fence of the grant it was given.
func verifyHolds(r *run, hash map[string]string) error {
	if f := hash["f"]; f != strconv.FormatInt(r.lastFence, 10) {
		return fmt.Errorf("f = %q, want the last fence %d", f, r.lastFence)
	}
	for field, v := range hash {
		var side, fence string
		switch {
		case strings.HasPrefix(field, "r:"):
			side, fence = field[2:]+"/read", v
		case strings.HasPrefix(field, "h:"):
			side, fence = field[2:]+"/semaphore", v
		case field == "w":
			w := strings.Split(v, " ")
			if len(w) != 3 {
				return fmt.Errorf("w = %q, want \"<holder> <fence> <deadline>\"", v)
			}
			side, fence = w[0]+"/write", w[1]
		default:
			continue
		}
		if want := r.fences[side]; want == 0 || fence != strconv.FormatInt(want, 10) {
			return fmt.Errorf("%s = %q, want the fence of %s's grant (%d)", field, v, side, want)
		}
	}
	return nil
}

// Differential comparison.

// timeline turns a number into something comparable across targets: a
// timestamp (µs or ms since the epoch, or a fence - 2^53) becomes ms since
// the target's start;
// anything else stays as it is. timed reports whether it is time-valued.
func timeline(v float64, start time.Time) (ms float64, timed bool) {
	switch {
	case v <= -1e15: // a mutex registration's score: its fence - 2^53
		return (v + scoreBase - float64(start.UnixMicro())) / 1000, true
	case v >= 1e15:
		return (v - float64(start.UnixMicro())) / 1000, true
	case v >= 1e12:
		return v - float64(start.UnixMilli()), true
	}
	return v, false
}

// sameNumber compares a and b from targets started at sa and sb; time-valued
// numbers (and any number when loose, such as wait_ms and PTTL) may differ by
// tol ms.
func sameNumber(a, b float64, sa, sb time.Time, loose bool, tol float64) bool {
	x, tx := timeline(a, sa)
	y, ty := timeline(b, sb)
	if tx != ty {
		return false
	}
	if tx || loose {
		return math.Abs(x-y) <= tol
	}
	return x == y
}

// sameText compares space-separated values token by token, numbers by
// sameNumber.
func sameText(a, b string, sa, sb time.Time, tol float64) bool {
	fa, fb := strings.Fields(a), strings.Fields(b)
	if len(fa) != len(fb) {
		return false
	}
	for i := range fa {
		x, errx := strconv.ParseFloat(fa[i], 64)
		y, erry := strconv.ParseFloat(fb[i], 64)
		if errx == nil && erry == nil {
			if !sameNumber(x, y, sa, sb, false, tol) {
				return false
			}
			continue
		}
		if fa[i] != fb[i] {
			return false
		}
	}
	return true
}

func sameReply(a, b any, sa, sb time.Time, tol float64) bool {
	switch x := a.(type) {
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		// {0, wait_ms[, holder, left_ms]}: the wait and what is left of
		// the holder's lease are time-valued.
		busyReply := len(x) >= 2 && x[0] == int64(0) && y[0] == int64(0)
		for i := range x {
			xi, xok := x[i].(int64)
			yi, yok := y[i].(int64)
			if xok && yok {
				if !sameNumber(float64(xi), float64(yi), sa, sb, busyReply && (i == 1 || i == 3), tol) {
					return false
				}
				continue
			}
			if !sameReply(x[i], y[i], sa, sb, tol) {
				return false
			}
		}
		return true
	case int64:
		y, ok := b.(int64)
		return ok && sameNumber(float64(x), float64(y), sa, sb, false, tol)
	case string:
		// A release that handed the lock on: "grant:<fence>:<holder>",
		// whose fence is time-valued like a bare one.
		y, _ := b.(string)
		fx, hx, okx := parseGrant(x)
		fy, hy, oky := parseGrant(y)
		if okx && oky {
			return hx == hy && sameNumber(float64(fx), float64(fy), sa, sb, false, tol)
		}
		return x == y
	default:
		return reflect.DeepEqual(a, b)
	}
}

// sameKeys compares two snapshots. A key within tol of its expiry may be
// gone on the other side (the real run is late by up to tol), so such keys
// are left out of both before comparing.
func sameKeys(a, b []keyState, sa, sb time.Time, tol float64) bool {
	a, b = settled(a, b, tol), settled(b, a, tol)
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Key != y.Key || x.Type != y.Type || (x.PTTL < 0) != (y.PTTL < 0) || !sameTTL(x, y, tol) {
			return false
		}
		switch x.Type {
		case "string":
			if !sameText(x.Value, y.Value, sa, sb, tol) {
				return false
			}
		case "hash":
			if len(x.Hash) != len(y.Hash) {
				return false
			}
			for f, v := range x.Hash {
				w, ok := y.Hash[f]
				if !ok || !sameText(v, w, sa, sb, tol) {
					return false
				}
			}
		case "zset":
			if len(x.ZSet) != len(y.ZSet) {
				return false
			}
			ys := map[string]float64{}
			for _, m := range y.ZSet {
				ys[m.Member] = m.Score
			}
			for _, m := range x.ZSet {
				s, ok := ys[m.Member]
				if !ok || !sameNumber(m.Score, s, sa, sb, false, tol) {
					return false
				}
			}
		}
	}
	return true
}

// sameTTL: the two keys expire alike, by PTTL or by expiry instant (when
// the PTTL was read plus the PTTL), each within tol. A real server's steps
// run late on a loaded machine, and neither measure alone is right: a key
// whose TTL was set on time and read late has a shorter PTTL and the same
// expiry; a key whose TTL was set late has the same PTTL and a later
// expiry.
func sameTTL(x, y keyState, tol float64) bool {
	if x.PTTL < 0 {
		return true
	}
	near := func(a, b int64) bool { return math.Abs(float64(a-b)) <= tol }
	return near(x.PTTL, y.PTTL) || near(x.At+x.PTTL, y.At+y.PTTL)
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// settled drops from a the keys about to expire that other lacks or that
// are about to expire there too.
func settled(a, other []keyState, tol float64) []keyState {
	expiring := func(k keyState) bool { return k.PTTL >= 0 && float64(k.PTTL) <= tol }
	theirs := map[string]keyState{}
	for _, k := range other {
		theirs[k.Key] = k
	}
	var out []keyState
	for _, k := range a {
		// About to expire here, and gone or about to expire there too: what
		// it holds may already be gone on one side (a set with a TTL of
		// 1 ms read member by member, after its PTTL).
		if o, ok := theirs[k.Key]; expiring(k) && (!ok || expiring(o)) {
			continue
		}
		out = append(out, k)
	}
	return out
}

// handedLast: a fair lock handed to holder, the last in line, for ttl (the
// rest of its place): its queue and its places go with it.
func handedLast(holder string, ttl time.Duration) []keyWant {
	return []keyWant{{holder: holder, ttl: ttl, handed: true}, {suffix: ":queue", absent: true}, {suffix: ":alive", absent: true}}
}

// retired expects a lock that nobody holds or waits for: B keeps only the
// last fence (a tombstone, or a hash with only f), for the floor; every
// other data key is gone.
func retired(f family) []keyWant {
	out := []keyWant{{holder: tombstone}}
	if f.name == rwFamily.name || f.name == semFamily.name {
		out = []keyWant{{fields: []string{"f"}, fenced: true}}
	}
	for _, s := range f.suffixes[1 : len(f.suffixes)-1] {
		out = append(out, keyWant{suffix: s, absent: true})
	}
	return out
}
