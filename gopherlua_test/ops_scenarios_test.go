package gopherlua_test

import (
	"fmt"
	"time"

	"github.com/lockgen/lockgen/lua"
)

// The operator's scripts: <family>_inspect reads a lock without writing,
// <family>_force_release takes it from every holder and keeps the fence
// floor. Busy acquire replies name the holder where the script knows it.

// busyBy: busy (wait about ms) and naming holder; left is what the reply
// says is left of holder's lease, about that many ms, or -1 when the reply
// does not say.
func busyBy(ms int64, holder string, left int64) check {
	return func(r *run, st *step, got any) error {
		if err := busy(ms)(r, st, got); err != nil {
			return err
		}
		a := got.([]any)
		if len(a) < 3 || a[2] != holder {
			return fmt.Errorf("reply %v, want it to name the holder %q", got, holder)
		}
		switch {
		case left < 0 && len(a) != 3:
			return fmt.Errorf("reply %v, want no lease left (the script does not read it)", got)
		case left >= 0 && len(a) != 4 && len(a) != 5: // fair_acquire adds now_ms (busy checks it)
			return fmt.Errorf("reply %v, want the lease left, about %d ms", got, left)
		case left >= 0:
			if d := a[3].(int64) - left; d > r.tol || -d > r.tol {
				return fmt.Errorf("lease left %d ms, want about %d", a[3], left)
			}
		}
		return nil
	}
}

// held is one holder an inspect reply must list: id, side (the kind it
// holds) and how much of its lease is left; its fence must be the fence of
// its grant.
type held struct {
	id, side string
	left     time.Duration
}

// queued is a waiter (or the writer's claim) with how long its place lives.
type queued struct {
	id   string
	left time.Duration
}

// inspected: an inspect reply listing exactly these holders and waiters
// (in order) and claim (nil: none), with the last fence seen as its floor
// (0 before any grant).
func inspected(holders []held, waiters []queued, claim *queued) check {
	return func(r *run, st *step, got any) error {
		a, ok := got.([]any)
		if !ok || len(a) != 5 {
			return fmt.Errorf("reply %#v, want {now, fence, holders, waiters, claim}", got)
		}
		now, ok1 := a[0].(int64)
		floor, ok2 := a[1].(int64)
		hs, ok3 := a[2].([]any)
		ws, ok4 := a[3].([]any)
		cl, ok5 := a[4].([]any)
		if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 {
			return fmt.Errorf("reply %#v, want {now, fence, holders, waiters, claim}", got)
		}
		if floor != r.lastFence {
			return fmt.Errorf("last fence %d, want %d", floor, r.lastFence)
		}
		if len(hs) != 4*len(holders) {
			return fmt.Errorf("holders %v, want %v", hs, holders)
		}
		for i, h := range holders {
			e := hs[4*i : 4*i+4]
			if e[0] != h.id || e[1] != h.side || e[2] != r.fences[h.id+"/"+h.side] {
				return fmt.Errorf("holder %d: %v, want %s holding %s with fence %d", i, e, h.id, h.side, r.fences[h.id+"/"+h.side])
			}
			if err := r.near(e[3], now, h.left); err != nil {
				return fmt.Errorf("holder %s: lease %v", h.id, err)
			}
		}
		// The claim is checked as one more waiter.
		want := waiters
		if claim != nil {
			want = append(waiters[:len(waiters):len(waiters)], *claim)
			ws = append(ws[:len(ws):len(ws)], cl...)
		} else if len(cl) != 0 {
			return fmt.Errorf("claim %v, want none", cl)
		}
		if len(ws) != 2*len(want) {
			return fmt.Errorf("waiters and claim %v, want %v", ws, want)
		}
		for i, w := range want {
			if ws[2*i] != w.id {
				return fmt.Errorf("waiter %d: %v, want %s", i, ws[2*i], w.id)
			}
			if err := r.near(ws[2*i+1], now, w.left); err != nil {
				return fmt.Errorf("waiter %s: %v", w.id, err)
			}
		}
		return nil
	}
}

// near checks that deadline (server ms) lies about left after now.
func (r *run) near(deadline any, now int64, left time.Duration) error {
	d, ok := deadline.(int64)
	if !ok {
		return fmt.Errorf("deadline %#v, want an integer", deadline)
	}
	if diff := d - now - left.Milliseconds(); diff > r.tol || -diff > r.tol {
		return fmt.Errorf("%d ms left, want about %d", d-now, left.Milliseconds())
	}
	return nil
}

func opsScenarios() []*scenario {
	return []*scenario{mutexOps(), fairOps(), rwOps(), semaphoreOps()}
}

// A mutex: busy replies name the holder (and its lease, without
// registration); inspect lists the holder and every registration, in the
// order a release would offer the lock, each with the set's expiry (no
// registration has a deadline of its own); a forced release leaves a
// tombstone for the rest of the lease, keeps the registrations and the
// flag, and wakes the registered.
func mutexOps() *scenario {
	acq, ren, ins, force := lua.MutexAcquire, lua.MutexRenew, lua.MutexInspect, lua.MutexForce
	return &scenario{
		name: "ops-mutex", fam: mutexFamily,
		steps: []step{
			{at: 0, script: ins, holder: "op", lease: 1000 * ms, want: inspected(nil, nil, nil), unchanged: true},
			{at: 0, script: force, holder: "op", lease: 1000 * ms, want: integer(0), unchanged: true},
			{at: 0, script: acq, holder: "A", lease: 2000 * ms, extra: registers, want: granted()},
			{at: 100 * ms, script: acq, holder: "B", lease: 1000 * ms, extra: window(0), want: busyBy(1000, "A", 1900)},
			{at: 100 * ms, script: acq, holder: "D", lease: 1000 * ms, extra: registers, want: busyBy(1000, "A", -1)},
			{at: 150 * ms, script: acq, holder: "C", lease: 1000 * ms, extra: registers, want: busyBy(1000, "A", -1)},
			// Both registered under A's fence: C first by id. The set
			// lives 12 s after C's registration.
			{at: 300 * ms, script: ins, holder: "op", lease: 1000 * ms, unchanged: true,
				want: inspected([]held{{"A", "mutex", 1700 * ms}}, []queued{{"C", setTTL(1000*ms) - 150*ms}, {"D", setTTL(1000*ms) - 150*ms}}, nil)},
			{at: 300 * ms, script: force, holder: "op", lease: 1000 * ms, want: integer(1),
				expect: []keyWant{{holder: tombstone, waiters: "1", ttl: 1700 * ms}, {suffix: ":waiters", members: []string{"C", "D"}}}},
			{at: 300 * ms, script: force, holder: "op", lease: 1000 * ms, want: integer(0), unchanged: true},
			{at: 350 * ms, script: ren, holder: "A", lease: 2000 * ms, want: integer(0), unchanged: true},
			{at: 350 * ms, script: ins, holder: "op", lease: 1000 * ms, unchanged: true,
				want: inspected(nil, []queued{{"C", setTTL(1000*ms) - 200*ms}, {"D", setTTL(1000*ms) - 200*ms}}, nil)},
			// C's registration goes with its grant; D's is still in the
			// set, so the flag stays set.
			{at: 400 * ms, script: acq, holder: "C", lease: 1000 * ms, extra: registers, want: granted(),
				expect: []keyWant{{holder: "C", waiters: "1", ttl: 1000 * ms}, {suffix: ":waiters", members: []string{"D"}}}},
			// The flag says registrations may be waiting: everyone is woken.
			{at: 500 * ms, script: force, holder: "op", lease: 1000 * ms, want: integer(1),
				expect: []keyWant{{holder: tombstone, waiters: "1", ttl: 900 * ms}}},
		},
		wakes: []string{"all", "all"},
	}
}

// A fair lock: inspect lists the queue in order with each place's
// deadline, leaving out places that ran out; a forced release hands the
// lock to the first live waiter, or leaves a tombstone.
func fairOps() *scenario {
	acq, ren, ins, force := lua.FairAcquire, lua.FairRenew, lua.FairInspect, lua.FairForce
	return &scenario{
		name: "ops-fair", fam: fairFamily,
		steps: []step{
			{at: 0, script: acq, holder: "A", lease: 1000 * ms, want: granted()},
			{at: 100 * ms, script: acq, holder: "B", lease: 1000 * ms, want: busyBy(900, "A", 900)},
			{at: 150 * ms, script: acq, holder: "C", lease: 300 * ms, want: busyBy(300, "A", 850)},
			{at: 200 * ms, script: acq, holder: "D", lease: 2000 * ms, want: busyBy(800, "A", 800)},
			{at: 250 * ms, script: ins, holder: "op", lease: 1000 * ms, unchanged: true,
				want: inspected([]held{{"A", "fair", 750 * ms}}, []queued{{"B", 850 * ms}, {"C", 200 * ms}, {"D", 1950 * ms}}, nil)},
			// C's place ran out at 450 ms.
			{at: 500 * ms, script: ins, holder: "op", lease: 1000 * ms, unchanged: true,
				want: inspected([]held{{"A", "fair", 500 * ms}}, []queued{{"B", 600 * ms}, {"D", 1700 * ms}}, nil)},
			// C's dead place is not first: it stays (unseen by inspect)
			// until it is.
			{at: 600 * ms, script: force, holder: "op", lease: 1000 * ms, want: integer(1),
				expect: []keyWant{{holder: "B", ttl: 500 * ms, handed: true}, {suffix: ":queue", members: []string{"C", "D"}}}},
			{at: 650 * ms, script: ren, holder: "A", lease: 1000 * ms, want: integer(0), unchanged: true},
			{at: 650 * ms, script: ins, holder: "op", lease: 1000 * ms, unchanged: true,
				want: inspected([]held{{"B", "fair", 450 * ms}}, []queued{{"D", 1550 * ms}}, nil)},
			{at: 700 * ms, script: acq, holder: "D", lease: 2000 * ms, want: busyBy(400, "B", 400)},
			// Now C is first, and dead: it goes, and D gets the lock.
			{at: 700 * ms, script: force, holder: "op", lease: 1000 * ms, want: integer(1),
				expect: handedLast("D", 2000*ms)},
			{at: 800 * ms, script: force, holder: "op", lease: 1000 * ms, want: integer(1),
				expect: []keyWant{{holder: tombstone, ttl: 1900 * ms}}},
			{at: 800 * ms, script: force, holder: "op", lease: 1000 * ms, want: integer(0), unchanged: true},
			{at: 800 * ms, script: ins, holder: "op", lease: 1000 * ms, want: inspected(nil, nil, nil), unchanged: true},
		},
		wakes: []string{grantWake("B"), grantWake("D")},
	}
}

// A read/write lock: inspect lists the writer, the readers and a waiting
// writer's claim; a forced release removes every hold, keeps the claim and
// the last fence, and wakes the busy.
func rwOps() *scenario {
	racq, rren, wacq, wren := lua.ReadAcquire, lua.ReadRenew, lua.WriteAcquire, lua.WriteRenew
	ins, force := lua.RWInspect, lua.RWForce
	return &scenario{
		name: "ops-rw", fam: rwFamily,
		steps: []step{
			{at: 0, script: racq, holder: "R1", lease: 1000 * ms, want: granted()},
			{at: 50 * ms, script: racq, holder: "R2", lease: 1000 * ms, want: granted()},
			// Readers are not named: there may be many.
			{at: 100 * ms, script: wacq, holder: "W", lease: 1000 * ms, want: busy(900)},
			{at: 150 * ms, script: ins, holder: "op", lease: 1000 * ms, unchanged: true,
				want: inspected([]held{{"R1", "read", 850 * ms}, {"R2", "read", 900 * ms}}, nil, &queued{"W", 950 * ms})},
			// B keeps its TTL, R2's deadline (1050 ms) and the floor: W's
			// claim (until 1100 ms) ends within that floor, so W's busy
			// attempt moved no TTL, and neither does the forced release.
			{at: 200 * ms, script: force, holder: "op", lease: 1000 * ms, want: integer(2),
				expect: []keyWant{{fields: []string{"exp", "f", "ww", "wwh"}, ttl: 850 * ms, fenced: true}, {suffix: ":readers", absent: true}}},
			{at: 250 * ms, script: rren, holder: "R1", lease: 1000 * ms, want: integer(0), unchanged: true},
			{at: 250 * ms, script: ins, holder: "op", lease: 1000 * ms, unchanged: true,
				want: inspected(nil, nil, &queued{"W", 850 * ms})},
			{at: 300 * ms, script: wacq, holder: "W", lease: 1000 * ms, want: granted()},
			{at: 350 * ms, script: racq, holder: "R3", lease: 1000 * ms, want: busyBy(950, "W", 950)},
			{at: 400 * ms, script: wacq, holder: "W2", lease: 1000 * ms, want: busyBy(900, "W", 900)},
			{at: 450 * ms, script: ins, holder: "op", lease: 1000 * ms, unchanged: true,
				want: inspected([]held{{"W", "write", 850 * ms}}, nil, &queued{"W2", 950 * ms})},
			// W's deadline (1300 ms) and the floor; W2's claim (1400 ms)
			// ends within it.
			{at: 500 * ms, script: force, holder: "op", lease: 1000 * ms, want: integer(1),
				expect: []keyWant{{fields: []string{"exp", "f", "ww", "wwh"}, ttl: 800 * ms, fenced: true}}},
			{at: 500 * ms, script: force, holder: "op", lease: 1000 * ms, want: integer(0), unchanged: true},
			{at: 550 * ms, script: wren, holder: "W", lease: 1000 * ms, want: integer(0), unchanged: true},
			{at: 600 * ms, script: wacq, holder: "W2", lease: 1000 * ms, want: granted()},
			// Nobody got busy since the last wake: none now.
			{at: 600 * ms, script: force, holder: "op", lease: 1000 * ms, want: integer(1),
				expect: []keyWant{{fields: []string{"exp", "f"}, ttl: 1000 * ms, fenced: true}}},
		},
		wakes: []string{"all", "all"},
	}
}

// A semaphore: inspect lists every permit; a forced release takes them all
// back and says how many in its wake.
func semaphoreOps() *scenario {
	acq, ren, ins, force := lua.SemaphoreAcquire, lua.SemaphoreRenew, lua.SemaphoreInspect, lua.SemaphoreForce
	two := []string{"2"}
	return &scenario{
		name: "ops-sem", fam: semFamily,
		steps: []step{
			{at: 0, script: ins, holder: "op", lease: 1000 * ms, want: inspected(nil, nil, nil), unchanged: true},
			{at: 0, script: acq, holder: "A", lease: 1000 * ms, extra: two, want: granted()},
			{at: 10 * ms, script: acq, holder: "B", lease: 1000 * ms, extra: two, want: granted()},
			{at: 20 * ms, script: acq, holder: "C", lease: 1000 * ms, extra: two, want: busy(980)},
			{at: 30 * ms, script: ins, holder: "op", lease: 1000 * ms, unchanged: true,
				want: inspected([]held{{"A", "semaphore", 970 * ms}, {"B", "semaphore", 980 * ms}}, nil, nil)},
			{at: 40 * ms, script: force, holder: "op", lease: 1000 * ms, want: integer(2),
				expect: []keyWant{{fields: []string{"exp", "f"}, ttl: 970 * ms, fenced: true}, {suffix: ":holds", absent: true}}},
			{at: 50 * ms, script: ren, holder: "A", lease: 1000 * ms, want: integer(0), unchanged: true},
			{at: 50 * ms, script: ins, holder: "op", lease: 1000 * ms, want: inspected(nil, nil, nil), unchanged: true},
			{at: 50 * ms, script: force, holder: "op", lease: 1000 * ms, want: integer(0), unchanged: true},
			{at: 60 * ms, script: acq, holder: "C", lease: 1000 * ms, extra: two, want: granted()},
		},
		wakes: []string{"n:2"},
	}
}
