package gopherlua_test

import (
	"fmt"
	"sort"
	"time"

	"github.com/lockgen/lockgen/lua"
)

// sortSteps orders generated steps by time, keeping the order of steps at
// the same time.
func sortSteps(steps []step) []step {
	sort.SliceStable(steps, func(i, j int) bool { return steps[i].at < steps[j].at })
	return steps
}

// fairEightInOrder: eight waiters arrive 100 ms apart on a fair lock with a
// 1050 ms lease; nobody ever releases. Each waiter heartbeats while queued
// (every 300 ms) and, once its wait runs out, retries, as the runtime does.
// The lock must pass from one to the next in arrival order, each getting it
// right after the previous lease ends; a waiter that is not first must be
// refused even when the lock is free: its retry hands the lock to the head
// instead, whose own retry then finds the lock its own (the same grant).
//
// Every step falls on a multiple of 100 ms and every lease ends 150 ms
// away from any step (W_{k-1}'s claimed lease ends 150 ms before W_k's
// turn, and no heartbeat falls in between), so a real-time step that runs a
// little late still sees what the shim's exact clock sees.
func fairEightInOrder() *scenario {
	acq, hb := lua.FairAcquire, lua.FairHeartbeat
	const n = 8
	lease := 1050 * ms
	hbEvery := 300 * ms
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("W%d", i)
	}
	// W_k's turn: everyone queued retries, W_k last. The lease W_{k-1}
	// claimed at its turn ended 150 ms before.
	turn := func(k int) time.Duration { return time.Duration(k) * (lease + 150*ms) }
	var steps []step
	steps = append(steps, step{at: 0, script: acq, holder: names[0], lease: lease, want: granted(),
		expect: []keyWant{{holder: names[0], waiters: "0", ttl: lease}}})
	var wakes []string
	for k := 1; k < n; k++ {
		arrive := time.Duration(k) * 100 * ms
		steps = append(steps, step{at: arrive, script: acq, holder: names[k], lease: lease, want: busy((lease - arrive).Milliseconds())})
		// Heartbeats on the 300 ms grid until its turn, except at the
		// turns of those before it, where it retries instead.
		for t := hbEvery; t < turn(k); t += hbEvery {
			if t > arrive && t%turn(1) != 0 {
				steps = append(steps, step{at: t, script: hb, holder: names[k], lease: lease, want: kept()})
			}
		}
	}
	for k := 1; k < n; k++ {
		at := turn(k)
		// W_k's place was last kept by its heartbeat 300 ms ago: that is
		// what is left of it, and so of the lease it is handed.
		left := lease - hbEvery
		for j := n - 1; j > k; j-- {
			st := step{at: at, script: acq, holder: names[j], lease: lease, want: busy(left.Milliseconds())}
			if j == n-1 {
				// The first retry finds the lock free and W_k first in
				// line: the lock goes to W_k, the caller stays queued.
				st.expect = []keyWant{{holder: names[k], waiters: "0", ttl: left, handed: true}}
				wakes = append(wakes, grantWake(names[k]))
			}
			steps = append(steps, st)
		}
		behind := names[k+1:]
		st := step{at: at, script: acq, holder: names[k], lease: lease, want: sameGrant(),
			expect: []keyWant{{holder: names[k], ttl: lease}, {suffix: ":queue", members: behind, absent: len(behind) == 0}}}
		if k == n-1 {
			// Nobody behind W7 made the hand-over: W7 takes the free lock
			// itself, first in line.
			st.want = granted()
		}
		steps = append(steps, st)
	}
	return &scenario{name: "fair-eight-in-order", fam: fairFamily, steps: sortSteps(steps), wakes: wakes}
}

func fairScenarios() []*scenario {
	acq, ren, rel, hb := lua.FairAcquire, lua.FairRenew, lua.FairRelease, lua.FairHeartbeat
	return []*scenario{
		fairEightInOrder(),
		{
			// A heartbeat that comes after both the holder's lease and the
			// caller's place ran out: the place is gone (reply 0), and the
			// lock goes to the first live waiter behind it, C, for what is
			// left of C's place (until 1020 ms).
			name: "fair-late-on-free", fam: fairFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 200 * ms, want: granted()},
				{at: 10 * ms, script: acq, holder: "B", lease: 100 * ms, want: busy(100)},
				{at: 20 * ms, script: acq, holder: "C", lease: 1000 * ms, want: busy(180)},
				{at: 300 * ms, script: hb, holder: "B", lease: 100 * ms, want: integer(0),
					expect: handedLast("C", 720*ms)},
			},
			wakes: []string{grantWake("C")},
		},
		{
			// Acquiring a lock one holds is the same grant again: the lease
			// restarts, nothing else changes; one release ends it. Scripts
			// called by someone who holds nothing change nothing.
			name: "fair-owner", fam: fairFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 2000 * ms, want: granted(),
					expect: []keyWant{{holder: "A", waiters: "0", ttl: 2000 * ms}}},
				{at: 100 * ms, script: acq, holder: "A", lease: 2000 * ms, want: sameGrant(), leaseOnly: true,
					expect: []keyWant{{holder: "A", ttl: 2000 * ms}}},
				{at: 200 * ms, script: acq, holder: "A", lease: 2000 * ms, want: sameGrant(), leaseOnly: true},
				{at: 500 * ms, script: ren, holder: "B", lease: 2000 * ms, want: integer(0), unchanged: true},
				{at: 500 * ms, script: rel, holder: "B", lease: 2000 * ms, want: integer(0), unchanged: true},
				{at: 500 * ms, script: hb, holder: "B", lease: 2000 * ms, want: integer(0), unchanged: true},
				{at: 600 * ms, script: ren, holder: "A", lease: 3000 * ms, want: integer(1), leaseOnly: true,
					expect: []keyWant{{holder: "A", ttl: 3000 * ms}}},
				{at: 700 * ms, script: rel, holder: "A", lease: 2000 * ms, want: integer(1), expect: retired(fairFamily)},
				{at: 700 * ms, script: rel, holder: "A", lease: 2000 * ms, want: integer(0), unchanged: true},
			},
		},
		{
			// A waiter that gives up (a release by one who does not hold
			// the lock: 0) leaves the queue; those behind it lose nothing.
			name: "fair-leave-mid-queue", fam: fairFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 1000 * ms, want: granted()},
				{at: 10 * ms, script: acq, holder: "B", lease: 1000 * ms, want: busy(990)},
				{at: 20 * ms, script: acq, holder: "C", lease: 1000 * ms, want: busy(980)},
				{at: 30 * ms, script: acq, holder: "D", lease: 1000 * ms, want: busy(970),
					expect: []keyWant{{suffix: ":queue", members: []string{"B", "C", "D"}, ttl: 1000 * ms},
						{suffix: ":alive", members: []string{"B", "C", "D"}, deadlines: []time.Duration{1010 * ms, 1020 * ms, 1030 * ms}, ttl: 1000 * ms}}},
				{at: 300 * ms, script: rel, holder: "C", lease: 1000 * ms, want: integer(0),
					expect: []keyWant{{holder: "A"}, {suffix: ":queue", members: []string{"B", "D"}}, {suffix: ":alive", members: []string{"B", "D"}}}},
				{at: 310 * ms, script: rel, holder: "C", lease: 1000 * ms, want: integer(0), unchanged: true},
				// A's release hands the lock to B for what is left of B's
				// place (until 1010 ms).
				{at: 400 * ms, script: rel, holder: "A", lease: 1000 * ms, want: handedTo("B"),
					expect: []keyWant{{holder: "B", waiters: "0", ttl: 610 * ms, handed: true},
						{suffix: ":queue", members: []string{"D"}}, {suffix: ":alive", members: []string{"D"}}}},
				{at: 410 * ms, script: acq, holder: "D", lease: 1000 * ms, want: busy(600)},
				// B missed the message: its retry is the same grant.
				{at: 420 * ms, script: acq, holder: "B", lease: 1000 * ms, want: sameGrant(), leaseOnly: true,
					expect: []keyWant{{holder: "B", ttl: 1000 * ms}, {suffix: ":queue", members: []string{"D"}}}},
				{at: 500 * ms, script: rel, holder: "B", lease: 1000 * ms, want: handedTo("D"),
					expect: handedLast("D", 910*ms)},
				{at: 510 * ms, script: acq, holder: "D", lease: 1000 * ms, want: sameGrant()},
				{at: 600 * ms, script: rel, holder: "D", lease: 1000 * ms, want: integer(1), expect: retired(fairFamily)},
			},
			wakes: []string{grantWake("B"), grantWake("D")},
		},
		{
			// The head gives up after it was handed the lock, before it
			// heard: its release is a release (1), and the lock goes on to
			// the next in line at once.
			name: "fair-head-leaves", fam: fairFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 1000 * ms, want: granted()},
				{at: 10 * ms, script: acq, holder: "B", lease: 1000 * ms, want: busy(990)},
				{at: 20 * ms, script: acq, holder: "C", lease: 1000 * ms, want: busy(980)},
				{at: 100 * ms, script: rel, holder: "A", lease: 1000 * ms, want: handedTo("B"),
					expect: []keyWant{{holder: "B", ttl: 910 * ms, handed: true}, {suffix: ":queue", members: []string{"C"}}}},
				{at: 200 * ms, script: rel, holder: "B", lease: 1000 * ms, want: handedTo("C"),
					expect: handedLast("C", 820*ms)},
				{at: 250 * ms, script: rel, holder: "B", lease: 1000 * ms, want: integer(0), unchanged: true},
				{at: 300 * ms, script: acq, holder: "C", lease: 1000 * ms, want: sameGrant(), leaseOnly: true,
					expect: []keyWant{{holder: "C", ttl: 1000 * ms}}},
				{at: 400 * ms, script: rel, holder: "C", lease: 1000 * ms, want: integer(1), expect: retired(fairFamily)},
			},
			wakes: []string{grantWake("B"), grantWake("C")},
		},
		{
			// The head leaves while the lock is free (its holder's lease
			// ran out, nobody has called since): the next head gets it.
			name: "fair-head-leaves-free", fam: fairFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 200 * ms, want: granted()},
				{at: 10 * ms, script: acq, holder: "B", lease: 1000 * ms, want: busy(190)},
				{at: 20 * ms, script: acq, holder: "C", lease: 1000 * ms, want: busy(180)},
				{at: 300 * ms, script: rel, holder: "B", lease: 1000 * ms, want: integer(0),
					expect: handedLast("C", 720*ms)},
				{at: 400 * ms, script: acq, holder: "C", lease: 1000 * ms, want: sameGrant()},
				{at: 500 * ms, script: rel, holder: "C", lease: 1000 * ms, want: integer(1), expect: retired(fairFamily)},
			},
			wakes: []string{grantWake("C")},
		},
		{
			// The holder vanished and nobody called for longer than the
			// fence floor: the lock's key is gone with its fence, the
			// queue is not (a long lease keeps B's place). B's heartbeat
			// restarts its place, a lease from now, and hands it the lock
			// for that long, with a fence from the server clock.
			name: "fair-handed-after-the-floor", fam: fairFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 200 * ms, want: granted()},
				{at: 10 * ms, script: acq, holder: "B", lease: 30000 * ms, want: busy(190)},
				{at: 10300 * ms, raw: []string{"PTTL", "lockgen:fair:{fair-handed-after-the-floor}"}, want: integer(-2)},
				{at: 10300 * ms, script: hb, holder: "B", lease: 30000 * ms, want: keptFor(30000),
					expect: handedLast("B", 30000*ms)},
				{at: 10400 * ms, script: rel, holder: "B", lease: 30000 * ms, want: integer(1), expect: retired(fairFamily)},
			},
			wakes: []string{grantWake("B")},
		},
		{
			// A waiter that stops heartbeating loses its place within one
			// lease: nobody waits for it, and a heartbeat that comes too
			// late finds it gone. Its entry stays in the sets until it
			// comes first in line or calls again (no script looks for dead
			// places elsewhere); live waiters keep theirs however long they
			// wait.
			name: "fair-dead-mid-queue", fam: fairFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 3000 * ms, want: granted()},
				{at: 10 * ms, script: acq, holder: "B", lease: 500 * ms, want: busy(500)},
				{at: 20 * ms, script: acq, holder: "C", lease: 500 * ms, want: busy(500)},
				{at: 30 * ms, script: acq, holder: "D", lease: 500 * ms, want: busy(500)},
				{at: 200 * ms, script: hb, holder: "B", lease: 500 * ms, want: kept()},
				{at: 200 * ms, script: hb, holder: "D", lease: 500 * ms, want: kept(),
					expect: []keyWant{{suffix: ":queue", members: []string{"B", "C", "D"}}}},
				{at: 400 * ms, script: hb, holder: "B", lease: 500 * ms, want: kept()},
				{at: 400 * ms, script: hb, holder: "D", lease: 500 * ms, want: kept()},
				// C's place ran out at 520 ms.
				{at: 600 * ms, script: hb, holder: "B", lease: 500 * ms, want: kept(),
					// alive is ordered by deadline: C's (520, past), D's
					// (900), B's (1100).
					expect: []keyWant{{suffix: ":queue", members: []string{"B", "C", "D"}},
						{suffix: ":alive", members: []string{"C", "D", "B"}, deadlines: []time.Duration{520 * ms, 900 * ms, 1100 * ms}}}},
				// C's late heartbeat: nobody removed its place, which it
				// keeps (no script acted on its death); then C dies.
				{at: 610 * ms, script: hb, holder: "C", lease: 500 * ms, want: kept(),
					expect: []keyWant{{suffix: ":queue", members: []string{"B", "C", "D"}},
						{suffix: ":alive", members: []string{"D", "B", "C"}, deadlines: []time.Duration{900 * ms, 1100 * ms, 1110 * ms}}}},
				{at: 700 * ms, script: hb, holder: "D", lease: 500 * ms, want: kept()},
				{at: 800 * ms, script: hb, holder: "B", lease: 500 * ms, want: kept()},
				// A releases: B, first in line, is handed the lock for
				// what is left of its place (until 1300 ms).
				{at: 900 * ms, script: rel, holder: "A", lease: 3000 * ms, want: handedTo("B"),
					expect: []keyWant{{holder: "B", ttl: 400 * ms, handed: true}, {suffix: ":queue", members: []string{"C", "D"}}}},
				// B crashed right then; D keeps heartbeating. Once B's
				// hold runs out (1300 ms), D's heartbeat keeps D's place
				// and, the lock being free, hands it to D, first in line.
				// Each heartbeat says when B's hold ends (the watchdog
				// sends the next one then) and then how long D's lasts.
				{at: 1000 * ms, script: hb, holder: "D", lease: 500 * ms, want: keptFor(300)},
				{at: 1200 * ms, script: hb, holder: "D", lease: 500 * ms, want: keptFor(100),
					expect: []keyWant{{holder: "B"}}},
				{at: 1400 * ms, script: hb, holder: "D", lease: 500 * ms, want: keptFor(500),
					expect: handedLast("D", 500*ms)},
				{at: 1450 * ms, script: acq, holder: "D", lease: 500 * ms, want: sameGrant()},
				{at: 1500 * ms, script: rel, holder: "D", lease: 500 * ms, want: integer(1), expect: retired(fairFamily)},
			},
			wakes: []string{grantWake("B"), grantWake("D")},
		},
		{
			// A waiter whose place ran out (not yet removed: it is not
			// first) and that asks again goes to the back, as if the place
			// had been removed when it ran out: it cannot get back ahead
			// of those who kept theirs.
			name: "fair-lapsed-retry", fam: fairFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 2000 * ms, want: granted()},
				{at: 10 * ms, script: acq, holder: "B", lease: 300 * ms, want: busy(300)},
				{at: 20 * ms, script: acq, holder: "C", lease: 2000 * ms, want: busy(1980),
					expect: []keyWant{{suffix: ":queue", members: []string{"B", "C"}}}},
				// B's place ran out at 310 ms.
				{at: 500 * ms, script: acq, holder: "B", lease: 300 * ms, want: busy(300),
					expect: []keyWant{{suffix: ":queue", members: []string{"C", "B"}},
						{suffix: ":alive", members: []string{"B", "C"}, deadlines: []time.Duration{800 * ms, 2020 * ms}}}},
				{at: 600 * ms, script: rel, holder: "A", lease: 2000 * ms, want: handedTo("C"),
					expect: []keyWant{{holder: "C", ttl: 1420 * ms, handed: true}, {suffix: ":queue", members: []string{"B"}}}},
			},
			wakes: []string{grantWake("C")},
		},
		{
			// A release finds the head's deadline with one ZPOPMIN of
			// alive when the head has the earliest deadline. Here C's
			// shorter lease puts it first in alive although B is first in
			// line: what the release popped goes back, and B's deadline is
			// read by name.
			name: "fair-alive-out-of-order", fam: fairFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 2000 * ms, want: granted()},
				{at: 10 * ms, script: acq, holder: "B", lease: 1000 * ms, want: busy(1000)},
				{at: 20 * ms, script: acq, holder: "C", lease: 300 * ms, want: busy(300)},
				{at: 200 * ms, script: hb, holder: "C", lease: 300 * ms, want: kept(),
					expect: []keyWant{{suffix: ":alive", members: []string{"C", "B"}, deadlines: []time.Duration{500 * ms, 1010 * ms}}}},
				{at: 300 * ms, script: rel, holder: "A", lease: 2000 * ms, want: handedTo("B"),
					expect: []keyWant{{holder: "B", ttl: 710 * ms, handed: true}, {suffix: ":queue", members: []string{"C"}},
						// C's heartbeat refreshed the sets' TTLs to its
						// deadline + 3 leases (1400 ms).
						{suffix: ":alive", members: []string{"C"}, deadlines: []time.Duration{500 * ms}, ttl: 1100 * ms}}},
			},
			wakes: []string{grantWake("B")},
		},
		{
			// The same with the waiter popped from alive dead (C, at
			// 320 ms): it stays out of alive, and its queue entry goes
			// when it comes first. Then the head popped from the queue has
			// no deadline, and the live waiter popped from alive (D) goes
			// back (alive was empty without it: it gets its TTL again) and
			// is handed the lock.
			name: "fair-alive-out-of-order-dead", fam: fairFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 2000 * ms, want: granted()},
				{at: 10 * ms, script: acq, holder: "B", lease: 1000 * ms, want: busy(1000)},
				{at: 20 * ms, script: acq, holder: "C", lease: 300 * ms, want: busy(300)},
				{at: 30 * ms, script: acq, holder: "D", lease: 2000 * ms, want: busy(1970)},
				{at: 400 * ms, script: rel, holder: "A", lease: 2000 * ms, want: handedTo("B"),
					expect: []keyWant{{holder: "B", ttl: 610 * ms, handed: true}, {suffix: ":queue", members: []string{"C", "D"}},
						{suffix: ":alive", members: []string{"D"}, deadlines: []time.Duration{2030 * ms}}}},
				{at: 500 * ms, script: rel, holder: "B", lease: 1000 * ms, want: handedTo("D"),
					expect: handedLast("D", 1530*ms)},
			},
			wakes: []string{grantWake("B"), grantWake("D")},
		},
		{
			// Everything of an abandoned queue goes away by itself; the
			// lock whose lease ended keeps only its fence, for the floor.
			name: "fair-abandoned", fam: fairFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 300 * ms, want: granted()},
				{at: 10 * ms, script: acq, holder: "B", lease: 400 * ms, want: busy(290)},
				{at: 20 * ms, script: acq, holder: "C", lease: 300 * ms, want: busy(280),
					// The sets live as long as the latest deadline (B's).
					expect: []keyWant{{suffix: ":queue", ttl: 390 * ms}, {suffix: ":alive", ttl: 390 * ms}}},
				{at: 700 * ms, raw: []string{"PTTL", "lockgen:fair:{fair-abandoned}:queue"}, want: integer(-2)},
				{at: 700 * ms, raw: []string{"PTTL", "lockgen:fair:{fair-abandoned}:alive"},
					want: integer(-2), expect: []keyWant{{holder: "A"}}},
			},
		},
	}
}
