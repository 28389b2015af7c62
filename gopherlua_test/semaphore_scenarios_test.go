package gopherlua_test

import "github.com/lockgen/lockgen/lua"

func semaphoreScenarios() []*scenario {
	acq, ren, rel := lua.SemaphoreAcquire, lua.SemaphoreRenew, lua.SemaphoreRelease
	two, one := []string{"2"}, []string{"1"}
	return []*scenario{
		{
			// Two permits; a holder's acquire is its permit again, never a
			// second one; the freed permit wakes one waiter.
			name: "sem-permits", fam: semFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 1000 * ms, extra: two, want: granted()},
				{at: 10 * ms, script: acq, holder: "B", lease: 1000 * ms, extra: two, want: granted()},
				{at: 20 * ms, script: acq, holder: "C", lease: 1000 * ms, extra: two, want: busy(980)},
				{at: 30 * ms, script: acq, holder: "A", lease: 1000 * ms, extra: two, want: sameGrant(),
					expect: []keyWant{{suffix: ":holds", members: []string{"B", "A"}, ttl: 1000 * ms},
						{fields: []string{"exp", "f", "h:A", "h:B", "wq"}, ttl: 1000 * ms, fenced: true}}},
				{at: 40 * ms, script: acq, holder: "C", lease: 1000 * ms, extra: two, want: busy(970)},
				{at: 50 * ms, script: rel, holder: "A", lease: 1000 * ms, want: integer(1)},
				{at: 60 * ms, script: rel, holder: "A", lease: 1000 * ms, want: integer(0), unchanged: true},
				{at: 70 * ms, script: acq, holder: "C", lease: 1000 * ms, extra: two, want: granted()},
				{at: 80 * ms, script: acq, holder: "D", lease: 1000 * ms, extra: two, want: busy(930)},
				{at: 90 * ms, script: ren, holder: "D", lease: 1000 * ms, want: integer(0), unchanged: true},
				{at: 90 * ms, script: rel, holder: "D", lease: 1000 * ms, want: integer(0), unchanged: true},
				{at: 100 * ms, script: ren, holder: "B", lease: 2000 * ms, want: integer(1),
					expect: []keyWant{{suffix: ":holds", members: []string{"C", "B"}, ttl: 2000 * ms}, {ttl: 2000 * ms, fenced: true}}},
				{at: 200 * ms, script: rel, holder: "B", lease: 1000 * ms, want: integer(1)},
				{at: 210 * ms, script: rel, holder: "C", lease: 1000 * ms, want: integer(1), expect: retired(semFamily)},
			},
			// Every release after the first busy reply wakes one waiter,
			// until the semaphore is empty.
			wakes: []string{"n:1", "n:1", "n:1"},
		},
		{
			// A holder that vanishes gives its permit back when its lease
			// ends; a later release counts it among the permits it frees.
			// (B's first busy reply wakes nobody: the whole hash, its wq
			// flag included, ended with A's lease, and B retries on its own.)
			name: "sem-expiry", fam: semFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 300 * ms, extra: one, want: granted()},
				{at: 100 * ms, script: acq, holder: "B", lease: 1000 * ms, extra: one, want: busy(200)},
				{at: 350 * ms, script: acq, holder: "B", lease: 1000 * ms, extra: one, want: granted()},
				{at: 400 * ms, script: ren, holder: "A", lease: 300 * ms, want: integer(0)},
				{at: 400 * ms, script: rel, holder: "A", lease: 300 * ms, want: integer(0)},
				{at: 500 * ms, script: acq, holder: "C", lease: 300 * ms, extra: two, want: granted()},
				{at: 510 * ms, script: acq, holder: "D", lease: 1000 * ms, extra: two, want: busy(290)},
				// C's lease ends at 800 ms; B's release then frees two permits.
				{at: 900 * ms, script: rel, holder: "B", lease: 1000 * ms, want: integer(1), expect: retired(semFamily)},
			},
			wakes: []string{"n:2"},
		},
	}
}
