package gopherlua_test

import "github.com/lockgen/lockgen/lua"

func rwScenarios() []*scenario {
	racq, rren, rrel := lua.ReadAcquire, lua.ReadRenew, lua.ReadRelease
	wacq, wren, wrel := lua.WriteAcquire, lua.WriteRenew, lua.WriteRelease
	return []*scenario{
		{
			// A waiting writer's claim moves the keys' TTLs only when it
			// ends past the floor after the deadline they cover (exp): a
			// claim a lease long behind a reader whose lease is as long
			// does not (the retry is one HSET), a longer one does.
			name: "rw-claim-ttl", fam: rwFamily,
			steps: []step{
				{at: 0, script: racq, holder: "R", lease: 1000 * ms, want: granted()},
				// Claim until 20100 ms, past exp (1000 ms) and the floor.
				{at: 100 * ms, script: wacq, holder: "W", lease: 20000 * ms, want: busy(900),
					expect: []keyWant{{fields: []string{"exp", "f", "r:R", "ww", "wwh", "wq"}, ttl: 20000 * ms, fenced: true},
						{suffix: ":readers", members: []string{"R"}, ttl: 20000 * ms}}},
				// Until 20200 ms: within the floor after exp (now 20100 ms).
				{at: 200 * ms, script: wacq, holder: "W", lease: 20000 * ms, want: busy(800),
					expect: []keyWant{{fields: []string{"exp", "f", "r:R", "ww", "wwh", "wq"}, ttl: 19900 * ms, fenced: true},
						{suffix: ":readers", members: []string{"R"}, ttl: 19900 * ms}}},
				{at: 300 * ms, script: rrel, holder: "R", lease: 1000 * ms, want: integer(1)},
				{at: 400 * ms, script: wacq, holder: "W", lease: 20000 * ms, want: granted()},
			},
			wakes: []string{"all"},
		},
		{
			// Readers share; a waiting writer holds new readers back (but not
			// a reader already in, whose acquire is the same grant again),
			// gets in when the last reader leaves, may take the read side
			// itself, and lets the blocked reader in when it stops writing.
			name: "rw-writer-priority", fam: rwFamily,
			steps: []step{
				{at: 0, script: racq, holder: "R1", lease: 1000 * ms, want: granted()},
				{at: 50 * ms, script: racq, holder: "R2", lease: 1000 * ms, want: granted(),
					expect: []keyWant{{suffix: ":readers", members: []string{"R1", "R2"}, ttl: 1000 * ms},
						{fields: []string{"exp", "f", "r:R1", "r:R2"}, ttl: 1000 * ms, fenced: true}}},
				{at: 100 * ms, script: racq, holder: "R1", lease: 1000 * ms, want: sameGrant(),
					expect: []keyWant{{suffix: ":readers", members: []string{"R2", "R1"}}, {fields: []string{"exp", "f", "r:R1", "r:R2"}, fenced: true}}},
				// The first reader lease to end is R2's, at 1050 ms.
				{at: 150 * ms, script: wacq, holder: "W", lease: 1000 * ms, want: busy(900)},
				// New readers wait for the writer (ww = 1150 ms).
				{at: 200 * ms, script: racq, holder: "R3", lease: 1000 * ms, want: busy(950)},
				{at: 250 * ms, script: racq, holder: "R1", lease: 1000 * ms, want: sameGrant()},
				{at: 300 * ms, script: rrel, holder: "R1", lease: 1000 * ms, want: integer(1),
					expect: []keyWant{{suffix: ":readers", members: []string{"R2"}}}},
				{at: 310 * ms, script: rrel, holder: "R1", lease: 1000 * ms, want: integer(0), unchanged: true},
				// The last reader leaves: "all"; the writer's claim stays.
				{at: 350 * ms, script: rrel, holder: "R2", lease: 1000 * ms, want: integer(1),
					expect: []keyWant{{fields: []string{"exp", "f", "ww", "wwh"}}, {suffix: ":readers", absent: true}}},
				{at: 360 * ms, script: racq, holder: "R3", lease: 1000 * ms, want: busy(790)},
				{at: 400 * ms, script: wacq, holder: "W", lease: 1000 * ms, want: granted(),
					expect: []keyWant{{fields: []string{"exp", "f", "w", "wq"}, ttl: 1000 * ms, fenced: true}}},
				{at: 410 * ms, script: racq, holder: "R3", lease: 1000 * ms, want: busy(990)},
				{at: 420 * ms, script: racq, holder: "W", lease: 1000 * ms, want: granted()},
				{at: 430 * ms, script: wacq, holder: "W", lease: 1000 * ms, want: sameGrant(),
					expect: []keyWant{{fields: []string{"exp", "f", "r:W", "w", "wq"}, fenced: true}}},
				// The write side ends: blocked readers hear "all"; W still reads.
				{at: 500 * ms, script: wrel, holder: "W", lease: 1000 * ms, want: integer(1),
					expect: []keyWant{{fields: []string{"exp", "f", "r:W"}, fenced: true}, {suffix: ":readers", members: []string{"W"}}}},
				{at: 500 * ms, script: wrel, holder: "W", lease: 1000 * ms, want: integer(0), unchanged: true},
				{at: 510 * ms, script: racq, holder: "R3", lease: 1000 * ms, want: granted()},
				{at: 600 * ms, script: rrel, holder: "R3", lease: 1000 * ms, want: integer(1)},
				{at: 600 * ms, script: rrel, holder: "W", lease: 1000 * ms, want: integer(1), expect: retired(rwFamily)},
			},
			wakes: []string{"all", "all"},
		},
		{
			// A reader that vanishes stops blocking the writer when its lease
			// ends.
			name: "rw-dead-reader", fam: rwFamily,
			steps: []step{
				{at: 0, script: racq, holder: "R", lease: 500 * ms, want: granted()},
				{at: 100 * ms, script: wacq, holder: "W", lease: 1000 * ms, want: busy(400)},
				{at: 300 * ms, script: wacq, holder: "W", lease: 1000 * ms, want: busy(200)},
				{at: 550 * ms, script: wacq, holder: "W", lease: 1000 * ms, want: granted(),
					expect: []keyWant{{suffix: ":readers", absent: true}, {fields: []string{"exp", "f", "w", "wq"}, fenced: true}}},
				{at: 600 * ms, script: rren, holder: "R", lease: 500 * ms, want: integer(0), unchanged: true},
				{at: 600 * ms, script: rrel, holder: "R", lease: 500 * ms, want: integer(0), unchanged: true},
				{at: 700 * ms, script: wrel, holder: "W", lease: 1000 * ms, want: integer(1), expect: retired(rwFamily)},
			},
			// W itself got busy while R read, so its release wakes.
			wakes: []string{"all"},
		},
		{
			// A reader whose lease ended is purged by the next reader's
			// acquire, which gets in beside the live one.
			name: "rw-dead-reader-read", fam: rwFamily,
			steps: []step{
				{at: 0, script: racq, holder: "R1", lease: 300 * ms, want: granted()},
				{at: 100 * ms, script: racq, holder: "R2", lease: 1000 * ms, want: granted()},
				{at: 500 * ms, script: racq, holder: "R3", lease: 1000 * ms, want: granted(),
					expect: []keyWant{{suffix: ":readers", members: []string{"R2", "R3"}}, {fields: []string{"exp", "f", "r:R2", "r:R3"}, fenced: true}}},
				{at: 600 * ms, script: rrel, holder: "R2", lease: 1000 * ms, want: integer(1)},
				{at: 600 * ms, script: rrel, holder: "R3", lease: 1000 * ms, want: integer(1), expect: retired(rwFamily)},
			},
		},
		{
			// A writer that gives up releases: not the writer, it withdraws
			// its claim (0), and the reader it held back gets in without
			// waiting out the writer's lease. Only the claimant can withdraw
			// it.
			name: "rw-writer-gives-up", fam: rwFamily,
			steps: []step{
				{at: 0, script: racq, holder: "R1", lease: 1000 * ms, want: granted()},
				{at: 100 * ms, script: wacq, holder: "W", lease: 1000 * ms, want: busy(900)},
				// Held back until ww = 1100 ms.
				{at: 150 * ms, script: racq, holder: "R2", lease: 1000 * ms, want: busy(950)},
				{at: 200 * ms, script: wrel, holder: "X", lease: 1000 * ms, want: integer(0), unchanged: true,
					expect: []keyWant{{fields: []string{"exp", "f", "r:R1", "wq", "ww", "wwh"}}}},
				{at: 200 * ms, script: wrel, holder: "W", lease: 1000 * ms, want: integer(0),
					expect: []keyWant{{fields: []string{"exp", "f", "r:R1"}, fenced: true}}},
				{at: 210 * ms, script: wrel, holder: "W", lease: 1000 * ms, want: integer(0), unchanged: true},
				{at: 220 * ms, script: racq, holder: "R2", lease: 1000 * ms, want: granted()},
				{at: 300 * ms, script: rrel, holder: "R1", lease: 1000 * ms, want: integer(1)},
				{at: 300 * ms, script: rrel, holder: "R2", lease: 1000 * ms, want: integer(1), expect: retired(rwFamily)},
			},
			wakes: []string{"all"},
		},
		{
			// The claim outlives the last reader; withdrawing it then leaves
			// nothing behind. While another writer holds the lock,
			// withdrawing wakes nobody: the holder's release does.
			name: "rw-writer-gives-up-alone", fam: rwFamily,
			steps: []step{
				{at: 0, script: racq, holder: "R", lease: 1000 * ms, want: granted()},
				{at: 100 * ms, script: wacq, holder: "W", lease: 1000 * ms, want: busy(900)},
				{at: 200 * ms, script: rrel, holder: "R", lease: 1000 * ms, want: integer(1),
					expect: []keyWant{{fields: []string{"exp", "f", "ww", "wwh"}}, {suffix: ":readers", absent: true}}},
				{at: 300 * ms, script: wrel, holder: "W", lease: 1000 * ms, want: integer(0), expect: retired(rwFamily)},
				{at: 400 * ms, script: wacq, holder: "W1", lease: 1000 * ms, want: granted()},
				{at: 410 * ms, script: wacq, holder: "W2", lease: 1000 * ms, want: busy(990)},
				{at: 420 * ms, script: racq, holder: "R", lease: 1000 * ms, want: busy(980)},
				{at: 430 * ms, script: wrel, holder: "W2", lease: 1000 * ms, want: integer(0),
					expect: []keyWant{{fields: []string{"exp", "f", "w", "wq"}, fenced: true}}},
				{at: 500 * ms, script: wrel, holder: "W1", lease: 1000 * ms, want: integer(1), expect: retired(rwFamily)},
			},
			// R's wait was marked before W's claim ended (read release), and
			// again under W1 (write release).
			wakes: []string{"all", "all"},
		},
		{
			// A reader cannot upgrade: it is busy as long as it reads.
			name: "rw-no-upgrade", fam: rwFamily,
			steps: []step{
				{at: 0, script: racq, holder: "R", lease: 1000 * ms, want: granted()},
				{at: 100 * ms, script: wacq, holder: "R", lease: 1000 * ms, want: busy(900)},
				{at: 200 * ms, script: rren, holder: "R", lease: 2000 * ms, want: integer(1),
					expect: []keyWant{{suffix: ":readers", members: []string{"R"}, ttl: 2000 * ms}, {ttl: 2000 * ms}}},
				{at: 300 * ms, script: rrel, holder: "R", lease: 1000 * ms, want: integer(1)},
				{at: 400 * ms, script: wacq, holder: "R", lease: 1000 * ms, want: granted()},
				{at: 500 * ms, script: wrel, holder: "R", lease: 1000 * ms, want: integer(1), expect: retired(rwFamily)},
			},
			wakes: []string{"all"},
		},
		{
			// Owner checks and writer leases.
			name: "rw-writer-owner", fam: rwFamily,
			steps: []step{
				{at: 0, script: wacq, holder: "W", lease: 300 * ms, want: granted()},
				{at: 10 * ms, script: wren, holder: "X", lease: 5000 * ms, want: integer(0), unchanged: true},
				{at: 20 * ms, script: wrel, holder: "X", lease: 300 * ms, want: integer(0), unchanged: true},
				{at: 30 * ms, script: rren, holder: "X", lease: 5000 * ms, want: integer(0), unchanged: true},
				{at: 40 * ms, script: rrel, holder: "X", lease: 300 * ms, want: integer(0), unchanged: true},
				{at: 50 * ms, script: wren, holder: "W", lease: 400 * ms, want: integer(1),
					expect: []keyWant{{ttl: 400 * ms, fenced: true}}},
				{at: 60 * ms, script: racq, holder: "X", lease: 300 * ms, want: busy(300)},
				{at: 70 * ms, script: wacq, holder: "Y", lease: 1000 * ms, want: busy(380)},
				// W's lease ends at 450 ms; its field lingers but blocks nobody.
				// V comes 300 ms after that, and releases 220 ms before Y's
				// claim ends: a real server's steps can start late by
				// scheduling noise (by 90 ms once under make test), and
				// which side of a lease's end a step falls must not depend
				// on it.
				{at: 750 * ms, script: wacq, holder: "V", lease: 300 * ms, want: granted()},
				{at: 760 * ms, script: wren, holder: "W", lease: 300 * ms, want: integer(0)},
				{at: 770 * ms, script: wrel, holder: "W", lease: 300 * ms, want: integer(0)},
				{at: 850 * ms, script: wrel, holder: "V", lease: 300 * ms, want: integer(1), expect: retired(rwFamily)},
			},
			// Y's busy write at 70 ms claimed the lock for writers until
			// 1070 ms, so the hash (and its wq flag) outlived W's lease: V's
			// release wakes the waiters.
			wakes: []string{"all"},
		},
	}
}
