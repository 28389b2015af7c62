package gopherlua_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockgen/lockgen/lua"
)

// idempotenceScenarios show, for every acquire script, that a call repeated
// (a go-redis retry after a dropped connection, a duplicated request) never
// adds a hold: the same call twice is one grant, with one fence and only
// the lease restarted, and the one release after it leaves nothing behind.
// A busy call repeated registers, queues or claims once, and the caller's
// release withdraws it.
func idempotenceScenarios() []*scenario {
	win := window(500 * ms)
	one := []string{"1"}
	return []*scenario{
		{
			name: "idempotent-mutex_acquire", fam: mutexFamily,
			steps: []step{
				{at: 0, script: lua.MutexAcquire, holder: "A", lease: 1000 * ms, extra: win, want: granted(),
					expect: []keyWant{{holder: "A", waiters: "0", ttl: 1000 * ms}, {suffix: ":waiters", absent: true}}},
				{at: 100 * ms, script: lua.MutexAcquire, holder: "A", lease: 1000 * ms, extra: win, want: sameGrant(), leaseOnly: true,
					expect: []keyWant{{holder: "A", waiters: "0", ttl: 1000 * ms}}},
				{at: 200 * ms, script: lua.MutexRelease, holder: "A", lease: 1000 * ms, want: integer(1), expect: retired(mutexFamily)},
				{at: 200 * ms, script: lua.MutexRelease, holder: "A", lease: 1000 * ms, want: integer(0), unchanged: true},
				{at: 300 * ms, script: lua.MutexAcquire, holder: "O", lease: 1000 * ms, extra: win, want: granted()},
				{at: 400 * ms, script: lua.MutexAcquire, holder: "A", lease: 1000 * ms, extra: win, want: busy(900),
					expect: []keyWant{{holder: "O", waiters: "1"}, {suffix: ":waiters", members: []string{"A"}, under: []string{"O"}}}},
				{at: 400 * ms, script: lua.MutexAcquire, holder: "A", lease: 1000 * ms, extra: win, want: busy(900), unchanged: true},
				{at: 500 * ms, script: lua.MutexRelease, holder: "A", lease: 1000 * ms, want: integer(0),
					expect: []keyWant{{holder: "O", waiters: "1"}, {suffix: ":waiters", absent: true}}},
				{at: 600 * ms, script: lua.MutexRelease, holder: "O", lease: 1000 * ms, want: integer(1), expect: retired(mutexFamily)},
			},
			// A withdrew: nobody to hand the lock to.
			wakes: []string{"all"},
		},
		{
			name: "idempotent-fair_acquire", fam: fairFamily,
			steps: []step{
				{at: 0, script: lua.FairAcquire, holder: "A", lease: 1000 * ms, want: granted(),
					expect: []keyWant{{holder: "A", waiters: "0", ttl: 1000 * ms}}},
				{at: 100 * ms, script: lua.FairAcquire, holder: "A", lease: 1000 * ms, want: sameGrant(), leaseOnly: true,
					expect: []keyWant{{holder: "A", ttl: 1000 * ms}}},
				{at: 200 * ms, script: lua.FairRelease, holder: "A", lease: 1000 * ms, want: integer(1), expect: retired(fairFamily)},
				{at: 200 * ms, script: lua.FairRelease, holder: "A", lease: 1000 * ms, want: integer(0), unchanged: true},
				{at: 300 * ms, script: lua.FairAcquire, holder: "O", lease: 1000 * ms, want: granted()},
				{at: 400 * ms, script: lua.FairAcquire, holder: "A", lease: 1000 * ms, want: busy(900),
					expect: []keyWant{{suffix: ":queue", members: []string{"A"}}, {suffix: ":alive", members: []string{"A"}, deadlines: []time.Duration{1400 * ms}}}},
				{at: 400 * ms, script: lua.FairAcquire, holder: "A", lease: 1000 * ms, want: busy(900), unchanged: true},
				{at: 500 * ms, script: lua.FairRelease, holder: "A", lease: 1000 * ms, want: integer(0),
					expect: []keyWant{{holder: "O"}, {suffix: ":queue", absent: true}, {suffix: ":alive", absent: true}}},
				{at: 600 * ms, script: lua.FairRelease, holder: "O", lease: 1000 * ms, want: integer(1), expect: retired(fairFamily)},
			},
			wakes: nil,
		},
		{
			name: "idempotent-read_acquire", fam: rwFamily,
			steps: []step{
				{at: 0, script: lua.ReadAcquire, holder: "A", lease: 1000 * ms, want: granted(),
					expect: []keyWant{{suffix: ":readers", members: []string{"A"}, deadlines: []time.Duration{1000 * ms}},
						{fields: []string{"exp", "f", "r:A"}, ttl: 1000 * ms, fenced: true}}},
				{at: 100 * ms, script: lua.ReadAcquire, holder: "A", lease: 1000 * ms, want: sameGrant(),
					expect: []keyWant{{suffix: ":readers", members: []string{"A"}, deadlines: []time.Duration{1100 * ms}, ttl: 1000 * ms},
						{fields: []string{"exp", "f", "r:A"}, ttl: 1000 * ms, fenced: true}}},
				{at: 200 * ms, script: lua.ReadRelease, holder: "A", lease: 1000 * ms, want: integer(1), expect: retired(rwFamily)},
				{at: 200 * ms, script: lua.ReadRelease, holder: "A", lease: 1000 * ms, want: integer(0), unchanged: true},
				{at: 300 * ms, script: lua.WriteAcquire, holder: "O", lease: 1000 * ms, want: granted()},
				{at: 400 * ms, script: lua.ReadAcquire, holder: "A", lease: 1000 * ms, want: busy(900),
					expect: []keyWant{{fields: []string{"exp", "f", "w", "wq"}, fenced: true}}},
				{at: 400 * ms, script: lua.ReadAcquire, holder: "A", lease: 1000 * ms, want: busy(900), unchanged: true},
				{at: 500 * ms, script: lua.ReadRelease, holder: "A", lease: 1000 * ms, want: integer(0), unchanged: true},
				{at: 600 * ms, script: lua.WriteRelease, holder: "O", lease: 1000 * ms, want: integer(1), expect: retired(rwFamily)},
			},
			// A got busy while O wrote.
			wakes: []string{"all"},
		},
		{
			name: "idempotent-write_acquire", fam: rwFamily,
			steps: []step{
				{at: 0, script: lua.WriteAcquire, holder: "A", lease: 1000 * ms, want: granted(),
					expect: []keyWant{{fields: []string{"exp", "f", "w"}, ttl: 1000 * ms, fenced: true}, {suffix: ":readers", absent: true}}},
				{at: 100 * ms, script: lua.WriteAcquire, holder: "A", lease: 1000 * ms, want: sameGrant(),
					expect: []keyWant{{fields: []string{"exp", "f", "w"}, ttl: 1000 * ms, fenced: true}}},
				{at: 200 * ms, script: lua.WriteRelease, holder: "A", lease: 1000 * ms, want: integer(1), expect: retired(rwFamily)},
				{at: 200 * ms, script: lua.WriteRelease, holder: "A", lease: 1000 * ms, want: integer(0), unchanged: true},
				{at: 300 * ms, script: lua.ReadAcquire, holder: "O", lease: 1000 * ms, want: granted()},
				{at: 400 * ms, script: lua.WriteAcquire, holder: "A", lease: 1000 * ms, want: busy(900),
					expect: []keyWant{{fields: []string{"exp", "f", "r:O", "wq", "ww", "wwh"}, fenced: true}}},
				{at: 400 * ms, script: lua.WriteAcquire, holder: "A", lease: 1000 * ms, want: busy(900), unchanged: true},
				// A's release withdraws its claim and lets blocked readers in.
				{at: 500 * ms, script: lua.WriteRelease, holder: "A", lease: 1000 * ms, want: integer(0),
					expect: []keyWant{{fields: []string{"exp", "f", "r:O"}, fenced: true}}},
				{at: 600 * ms, script: lua.ReadRelease, holder: "O", lease: 1000 * ms, want: integer(1), expect: retired(rwFamily)},
			},
			wakes: []string{"all"},
		},
		{
			name: "idempotent-semaphore_acquire", fam: semFamily,
			steps: []step{
				{at: 0, script: lua.SemaphoreAcquire, holder: "A", lease: 1000 * ms, extra: one, want: granted(),
					expect: []keyWant{{suffix: ":holds", members: []string{"A"}, deadlines: []time.Duration{1000 * ms}},
						{fields: []string{"exp", "f", "h:A"}, ttl: 1000 * ms, fenced: true}}},
				{at: 100 * ms, script: lua.SemaphoreAcquire, holder: "A", lease: 1000 * ms, extra: one, want: sameGrant(),
					expect: []keyWant{{suffix: ":holds", members: []string{"A"}, deadlines: []time.Duration{1100 * ms}, ttl: 1000 * ms},
						{fields: []string{"exp", "f", "h:A"}, ttl: 1000 * ms, fenced: true}}},
				{at: 200 * ms, script: lua.SemaphoreRelease, holder: "A", lease: 1000 * ms, want: integer(1), expect: retired(semFamily)},
				{at: 200 * ms, script: lua.SemaphoreRelease, holder: "A", lease: 1000 * ms, want: integer(0), unchanged: true},
				{at: 300 * ms, script: lua.SemaphoreAcquire, holder: "O", lease: 1000 * ms, extra: one, want: granted()},
				{at: 400 * ms, script: lua.SemaphoreAcquire, holder: "A", lease: 1000 * ms, extra: one, want: busy(900),
					expect: []keyWant{{fields: []string{"exp", "f", "h:O", "wq"}, fenced: true}}},
				{at: 400 * ms, script: lua.SemaphoreAcquire, holder: "A", lease: 1000 * ms, extra: one, want: busy(900), unchanged: true},
				{at: 500 * ms, script: lua.SemaphoreRelease, holder: "A", lease: 1000 * ms, want: integer(0), unchanged: true},
				{at: 600 * ms, script: lua.SemaphoreRelease, holder: "O", lease: 1000 * ms, want: integer(1), expect: retired(semFamily)},
			},
			wakes: []string{"n:1"},
		},
	}
}

// TestEveryAcquireIsShownIdempotent: each acquire script of package lua
// (a new one included) has its idempotence scenario, which opens with the
// same call twice: a grant, then the same grant again.
func TestEveryAcquireIsShownIdempotent(t *testing.T) {
	byName := map[string]*scenario{}
	for _, sc := range idempotenceScenarios() {
		byName[sc.name] = sc
	}
	n := 0
	for _, s := range lua.All() {
		if !strings.HasSuffix(s.Name, "_acquire") {
			continue
		}
		n++
		sc := byName["idempotent-"+s.Name]
		if sc == nil {
			t.Errorf("%s has no scenario idempotent-%s", s.Name, s.Name)
			continue
		}
		first, again := sc.steps[0], sc.steps[1]
		if first.script != s || again.script != s || first.holder != again.holder ||
			first.lease != again.lease || !slices.Equal(first.extra, again.extra) {
			t.Errorf("%s: the scenario does not open with the same call of %s twice", sc.name, s.Name)
		}
	}
	if n != 5 {
		t.Errorf("%d acquire scripts, want 5 (mutex, fair, read, write, semaphore)", n)
	}
}
