package gopherlua_test

import (
	"fmt"
	"sort"
	"time"

	"github.com/lockgen/lockgen/lua"
)

// queued: a busy reply from a fair acquire; the wait only has to lie in
// 1..lease, as the lock may be free with another waiter first in line.
func queued() check {
	return func(r *run, st *step, got any) error {
		ok, wait, err := pair(got)
		if err != nil {
			return err
		}
		if ok != 0 || wait < 1 || wait > st.lease.Milliseconds() {
			return fmt.Errorf("reply %v, want {0, 1..%d}", got, st.lease.Milliseconds())
		}
		return nil
	}
}

// sortSteps orders generated steps by time, keeping the order of steps at
// the same time.
func sortSteps(steps []step) []step {
	sort.SliceStable(steps, func(i, j int) bool { return steps[i].at < steps[j].at })
	return steps
}

// fairEightInOrder: eight waiters arrive 100 ms apart on a fair lock with a
// 1 s lease; nobody ever releases. Each waiter heartbeats every 300 ms while
// queued and retries when its lease-bounded wait runs out, as the runtime
// does. The lock must pass from one to the next in arrival order, each
// getting in right after the previous lease ends, and a waiter that is not
// first must be refused even when the lock is free.
func fairEightInOrder() *scenario {
	acq, hb := lua.FairAcquire, lua.FairHeartbeat
	const n = 8
	lease := 1000 * ms
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("W%d", i)
	}
	// W_k is granted at grantAt(k): 150 ms after W_{k-1}'s lease ended (a
	// margin for a late real-time step).
	grantAt := func(k int) time.Duration { return time.Duration(k) * (lease + 150*ms) }
	var steps []step
	steps = append(steps, step{at: 0, script: acq, holder: names[0], lease: lease, want: granted()})
	for k := 1; k < n; k++ {
		arrive := time.Duration(k) * 100 * ms
		steps = append(steps, step{at: arrive, script: acq, holder: names[k], lease: lease, want: queued()})
		// Heartbeats from arrival until granted.
		for t := arrive + 300*ms; t < grantAt(k); t += 300 * ms {
			steps = append(steps, step{at: t, script: hb, holder: names[k], lease: lease, want: integer(1)})
		}
	}
	for k := 1; k < n; k++ {
		// Everyone behind W_k retries too (their waits end together) and is
		// refused although the lock is free; then W_k gets it.
		for j := n - 1; j > k; j-- {
			steps = append(steps, step{at: grantAt(k), script: acq, holder: names[j], lease: lease, want: queued()})
		}
		var behind []string
		if k+1 < n {
			behind = names[k+1:]
		}
		steps = append(steps, step{at: grantAt(k), script: acq, holder: names[k], lease: lease, want: granted(),
			expect: []keyWant{{holder: names[k], count: 1, ttl: lease}, {suffix: ":queue", members: behind, absent: behind == nil}}})
	}
	return &scenario{name: "fair-eight-in-order", fam: fairFamily, steps: sortSteps(steps)}
}

func fairScenarios() []*scenario {
	acq, ren, rel, leave, hb := lua.FairAcquire, lua.FairRenew, lua.FairRelease, lua.FairLeave, lua.FairHeartbeat
	return []*scenario{
		fairEightInOrder(),
		{
			name: "fair-reentrant", fam: fairFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 2000 * ms, want: granted()},
				{at: 100 * ms, script: acq, holder: "A", lease: 2000 * ms, want: reentered()},
				{at: 200 * ms, script: acq, holder: "A", lease: 2000 * ms, want: reentered(),
					expect: []keyWant{{holder: "A", count: 3, ttl: 2000 * ms}}},
				{at: 300 * ms, script: rel, holder: "A", lease: 2000 * ms, want: integer(2)},
				{at: 400 * ms, script: rel, holder: "A", lease: 2000 * ms, want: integer(1),
					expect: []keyWant{{holder: "A", count: 1, ttl: 1800 * ms}}},
				{at: 500 * ms, script: ren, holder: "B", lease: 2000 * ms, want: integer(0), unchanged: true},
				{at: 500 * ms, script: rel, holder: "B", lease: 2000 * ms, want: integer(-1), unchanged: true},
				{at: 500 * ms, script: hb, holder: "B", lease: 2000 * ms, want: integer(0), unchanged: true},
				{at: 500 * ms, script: leave, holder: "B", lease: 2000 * ms, want: integer(0), unchanged: true},
				{at: 600 * ms, script: ren, holder: "A", lease: 3000 * ms, want: integer(1),
					expect: []keyWant{{ttl: 3000 * ms}}},
				{at: 700 * ms, script: rel, holder: "A", lease: 2000 * ms, want: integer(0),
					expect: []keyWant{{absent: true}}},
			},
		},
		{
			// A waiter that gives up mid-queue costs those behind it nothing.
			name: "fair-leave-mid-queue", fam: fairFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 1000 * ms, want: granted()},
				{at: 10 * ms, script: acq, holder: "B", lease: 1000 * ms, want: busy(990)},
				{at: 20 * ms, script: acq, holder: "C", lease: 1000 * ms, want: busy(980)},
				{at: 30 * ms, script: acq, holder: "D", lease: 1000 * ms, want: busy(970),
					expect: []keyWant{{suffix: ":queue", members: []string{"B", "C", "D"}, ttl: 1000 * ms},
						{suffix: ":alive", members: []string{"B", "C", "D"}, ttl: 1000 * ms}}},
				{at: 300 * ms, script: leave, holder: "C", lease: 1000 * ms, want: integer(1),
					expect: []keyWant{{suffix: ":queue", members: []string{"B", "D"}}, {suffix: ":alive", members: []string{"B", "D"}}}},
				{at: 310 * ms, script: leave, holder: "C", lease: 1000 * ms, want: integer(0)},
				{at: 400 * ms, script: rel, holder: "A", lease: 1000 * ms, want: integer(0)},
				{at: 410 * ms, script: acq, holder: "D", lease: 1000 * ms, want: queued()},
				{at: 420 * ms, script: acq, holder: "B", lease: 1000 * ms, want: granted(),
					expect: []keyWant{{suffix: ":queue", members: []string{"D"}}}},
				{at: 500 * ms, script: rel, holder: "B", lease: 1000 * ms, want: integer(0)},
				{at: 510 * ms, script: acq, holder: "D", lease: 1000 * ms, want: granted(),
					expect: []keyWant{{suffix: ":queue", absent: true}, {suffix: ":alive", absent: true}}},
				{at: 600 * ms, script: rel, holder: "D", lease: 1000 * ms, want: integer(0),
					expect: []keyWant{{absent: true}}},
			},
			wakes: []string{"id:B", "id:D"},
		},
		{
			// The head leaves while the lock is free: the next head hears it.
			name: "fair-head-leaves", fam: fairFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 1000 * ms, want: granted()},
				{at: 10 * ms, script: acq, holder: "B", lease: 1000 * ms, want: busy(990)},
				{at: 20 * ms, script: acq, holder: "C", lease: 1000 * ms, want: busy(980)},
				{at: 100 * ms, script: rel, holder: "A", lease: 1000 * ms, want: integer(0)},
				{at: 200 * ms, script: leave, holder: "B", lease: 1000 * ms, want: integer(1)},
				{at: 300 * ms, script: acq, holder: "C", lease: 1000 * ms, want: granted()},
				{at: 400 * ms, script: rel, holder: "C", lease: 1000 * ms, want: integer(0)},
			},
			wakes: []string{"id:B", "id:C"},
		},
		{
			// A waiter that stops heartbeating loses its place within one
			// lease, wherever it stands; live waiters keep theirs however
			// long they wait.
			name: "fair-dead-mid-queue", fam: fairFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 3000 * ms, want: granted()},
				{at: 10 * ms, script: acq, holder: "B", lease: 500 * ms, want: busy(500)},
				{at: 20 * ms, script: acq, holder: "C", lease: 500 * ms, want: busy(500)},
				{at: 30 * ms, script: acq, holder: "D", lease: 500 * ms, want: busy(500)},
				{at: 200 * ms, script: hb, holder: "B", lease: 500 * ms, want: integer(1)},
				{at: 200 * ms, script: hb, holder: "D", lease: 500 * ms, want: integer(1),
					expect: []keyWant{{suffix: ":queue", members: []string{"B", "C", "D"}}}},
				{at: 400 * ms, script: hb, holder: "B", lease: 500 * ms, want: integer(1)},
				{at: 400 * ms, script: hb, holder: "D", lease: 500 * ms, want: integer(1)},
				// C's place ran out at 520 ms.
				{at: 600 * ms, script: hb, holder: "B", lease: 500 * ms, want: integer(1),
					// alive is ordered by deadline: D's (900) before B's (1100).
					expect: []keyWant{{suffix: ":queue", members: []string{"B", "D"}}, {suffix: ":alive", members: []string{"D", "B"}}}},
				{at: 610 * ms, script: hb, holder: "C", lease: 500 * ms, want: integer(0)},
				{at: 700 * ms, script: hb, holder: "D", lease: 500 * ms, want: integer(1)},
				{at: 800 * ms, script: hb, holder: "B", lease: 500 * ms, want: integer(1)},
				// A releases: B, first in line, is told.
				{at: 900 * ms, script: rel, holder: "A", lease: 3000 * ms, want: integer(0)},
				// B crashed right then; D keeps heartbeating. Once B's place
				// runs out (1300 ms), D's heartbeat evicts it and, the lock
				// being free, wakes D, now first in line.
				{at: 1000 * ms, script: hb, holder: "D", lease: 500 * ms, want: integer(1)},
				{at: 1200 * ms, script: hb, holder: "D", lease: 500 * ms, want: integer(1)},
				{at: 1400 * ms, script: hb, holder: "D", lease: 500 * ms, want: integer(1),
					expect: []keyWant{{suffix: ":queue", members: []string{"D"}}}},
				{at: 1450 * ms, script: acq, holder: "D", lease: 500 * ms, want: granted()},
				{at: 1500 * ms, script: rel, holder: "D", lease: 500 * ms, want: integer(0),
					expect: []keyWant{{absent: true}, {suffix: ":queue", absent: true}, {suffix: ":alive", absent: true}}},
			},
			wakes: []string{"id:B", "id:D"},
		},
		{
			// Everything of an abandoned queue goes away by itself.
			name: "fair-abandoned", fam: fairFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 300 * ms, want: granted()},
				{at: 10 * ms, script: acq, holder: "B", lease: 400 * ms, want: busy(290)},
				{at: 20 * ms, script: acq, holder: "C", lease: 300 * ms, want: busy(280),
					// The sets live as long as the latest deadline (B's).
					expect: []keyWant{{suffix: ":queue", ttl: 390 * ms}, {suffix: ":alive", ttl: 390 * ms}}},
				{at: 700 * ms, raw: []string{"EXISTS", "lockgen:fair:{fair-abandoned}", "lockgen:fair:{fair-abandoned}:queue", "lockgen:fair:{fair-abandoned}:alive"},
					want: integer(0)},
			},
		},
	}
}
