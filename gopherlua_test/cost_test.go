package gopherlua_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/lockgen/lockgen/lua"
	"github.com/lockgen/lockgen/redistest"
)

// costCase is one path through one script: setup calls, then the measured
// call, and the number of Redis commands the script may issue on that path.
type costCase struct {
	path string
	fam  family
	// setup and call: script name, holder, lease ms[, ARGV[4]]; an ARGV
	// "$F" is the fence of the holder's grant, which B holds (as the
	// runtime sends it to mutex_release), or 0.
	setup [][]string
	// raw, if set, are plain commands run after setup, "$B" standing for
	// the lock's key: states a script call reaches only after a wait.
	raw  [][]string
	call []string
	want int
}

// Mutex setups: A holds the lock, A gave it back (a tombstone is left), B
// registered as a waiter, A's release offered the lock to B, or offered it
// to B with C registered behind B.
var (
	mutexHeld         = [][]string{{"mutex_acquire", "A", "1000", "500"}}
	mutexReleased     = [][]string{{"mutex_acquire", "A", "1000", "500"}, {"mutex_release", "A", "1000", "$F"}}
	mutexRegistered   = [][]string{{"mutex_acquire", "A", "1000", "500"}, {"mutex_acquire", "B", "1000", "500"}}
	mutexHanded       = [][]string{{"mutex_acquire", "A", "1000", "500"}, {"mutex_acquire", "B", "1000", "500"}, {"mutex_release", "A", "1000", "$F"}}
	mutexOfferedAhead = [][]string{{"mutex_acquire", "A", "1000", "500"}, {"mutex_acquire", "B", "1000", "500"},
		{"mutex_acquire", "C", "1000", "500"}, {"mutex_release", "A", "1000", "$F"}}
	fairHeld     = [][]string{{"fair_acquire", "A", "1000"}}
	fairReleased = [][]string{{"fair_acquire", "A", "1000"}, {"fair_release", "A", "1000"}}
	fairQueued   = [][]string{{"fair_acquire", "A", "1000"}, {"fair_acquire", "B", "1000"}}
)

// costAfter: for the paths that the setup alone does not make certain, B
// after the measured call, so that a row measures the path it names.
var costAfter = map[string]*regexp.Regexp{
	"mutex busy, registers, marks":         regexp.MustCompile(`^A \d+ \+$`),
	"mutex busy, registers":                regexp.MustCompile(`^A \d+ \+$`),
	"mutex busy, already registered":       regexp.MustCompile(`^A \d+ \+$`),
	"mutex busy, window 0":                 regexp.MustCompile(`^A \d+ -$`),
	"mutex release, hands over":            regexp.MustCompile(`^B \d+ \+$`),
	"mutex release, registrations expired": regexp.MustCompile(`^! \d+ -$`),
	"mutex claim of an offer":              regexp.MustCompile(`^B \d+ \+$`),
	"mutex claim, others waiting":          regexp.MustCompile(`^B \d+ \+$`),
	"mutex claim, registers next":          regexp.MustCompile(`^B \d+ \+$`),
	"mutex free take, registers next":      regexp.MustCompile(`^B \d+ \+$`),
	"mutex release by a waiter":            regexp.MustCompile(`^A \d+ \+$`),
	"fair uncontended acquire, tombstone":  regexp.MustCompile(`^B \d+ -$`),
	"fair acquire, handed (missed)":        regexp.MustCompile(`^B \d+ -$`),
	"fair release by a waiter":             regexp.MustCompile(`^A \d+ -$`),
}

// costCommands: for the paths whose every command is part of the claim
// they make, the commands themselves (as the report prints them).
var costCommands = map[string]string{
	// A registered waiter that tries again while the holder holds reads
	// the lock and its lease, and its ZADD NX finds it registered: no
	// write, no TTL (mutex-idle-waiter-cost).
	"mutex busy, already registered": "GET×1 PTTL×1 ZADD×1",
	// A claim publishes "taken" when B is marked (an offer always is).
	"mutex claim of an offer":     "GET×1 PEXPIRE×1 PUBLISH×1",
	"mutex claim, others waiting": "GET×1 PEXPIRE×1 PUBLISH×1",
	// With nobody queued, a fair acquire and release read no clock.
	"fair uncontended acquire, tombstone": "GET×1 SET×1 ZRANGE×1",
	"fair release, no waiters":            "GET×1 SET×1 ZPOPMIN×1",
}

// costCases pin the common paths. The package documentation of lua carries
// the same table; change both together.
// farDeadline is a fair heartbeat's deadline far in the future (year
// 5138, in server ms): it always grows the place's.
const farDeadline = "99999999999999"

var costCases = []costCase{
	{"mutex uncontended acquire", mutexFamily, nil, nil, []string{"mutex_acquire", "A", "1000", "500"}, 4},
	{"mutex uncontended acquire, tombstone", mutexFamily, mutexReleased, nil, []string{"mutex_acquire", "B", "1000", "500"}, 2},
	{"mutex acquire, own lock", mutexFamily, mutexHeld, nil, []string{"mutex_acquire", "A", "1000", "500"}, 2},
	{"mutex busy, registers, marks", mutexFamily, mutexHeld, nil, []string{"mutex_acquire", "B", "1000", "500"}, 5},
	{"mutex busy, registers", mutexFamily, mutexRegistered, nil, []string{"mutex_acquire", "C", "1000", "1000"}, 4},
	{"mutex busy, already registered", mutexFamily, mutexRegistered, nil, []string{"mutex_acquire", "B", "1000", "500"}, 3},
	{"mutex busy, window 0", mutexFamily, mutexHeld, nil, []string{"mutex_acquire", "B", "1000", "0"}, 2},
	{"mutex renew", mutexFamily, mutexHeld, nil, []string{"mutex_renew", "A", "1000"}, 3},
	{"mutex floor, fence above it (quorum)", mutexFamily, mutexHeld, nil, []string{"mutex_floor", "A", "1000", "1"}, 4},
	{"mutex release, no waiters", mutexFamily, mutexHeld, nil, []string{"mutex_release", "A", "1000", "$F"}, 1},
	{"mutex release, hands over", mutexFamily, mutexRegistered, nil, []string{"mutex_release", "A", "1000", "$F"}, 4},
	// B marked, the set gone (its TTL ran out): "all", and the tombstone
	// written on the guess stands.
	{"mutex release, registrations expired", mutexFamily, mutexRegistered, [][]string{{"DEL", "$B:waiters"}},
		[]string{"mutex_release", "A", "1000", "$F"}, 3},
	{"mutex claim of an offer", mutexFamily, mutexHanded, nil, []string{"mutex_acquire", "B", "1000", "500"}, 3},
	{"mutex claim, others waiting", mutexFamily, mutexOfferedAhead, nil, []string{"mutex_acquire", "B", "1000", "500"}, 3},
	{"mutex claim, registers next", mutexFamily, mutexHanded, nil, []string{"mutex_acquire", "B", "1000", "500", "D"}, 5},
	{"mutex free take, registers next", mutexFamily, mutexReleased, nil, []string{"mutex_acquire", "B", "1000", "500", "D"}, 4},
	{"mutex release by a waiter", mutexFamily, mutexRegistered, nil, []string{"mutex_release", "B", "1000"}, 2},

	{"fair uncontended acquire", fairFamily, nil, nil, []string{"fair_acquire", "A", "1000"}, 4},
	{"fair uncontended acquire, tombstone", fairFamily, fairReleased, nil, []string{"fair_acquire", "B", "1000"}, 3},
	{"fair acquire, own lock", fairFamily, fairHeld, nil, []string{"fair_acquire", "A", "1000"}, 2},
	{"fair busy (joins queue)", fairFamily, fairHeld, nil, []string{"fair_acquire", "B", "1000"}, 9},
	// C's longer lease gives the sets a later deadline than B's, whenever the
	// two calls run (within one ms, a join with B's lease would find the TTL
	// already long enough and ask whether the set has one).
	{"fair busy (joins behind)", fairFamily, fairQueued, nil, []string{"fair_acquire", "C", "2000"}, 7},
	{"fair busy (queued)", fairFamily, fairQueued, nil, []string{"fair_acquire", "B", "1000"}, 8},
	// The common path (issue 24): PTTL and ZADD XX GT CH at the deadline
	// the runtime sends, far ahead here so that it always grows; every
	// third heartbeat or so also refreshes the sets' TTLs (2 PEXPIREAT).
	{"fair heartbeat", fairFamily, fairQueued, nil, []string{"fair_heartbeat", "B", "1000", farDeadline, "0"}, 2},
	{"fair heartbeat, refresh", fairFamily, fairQueued, nil, []string{"fair_heartbeat", "B", "1000", farDeadline, "1"}, 4},
	// A deadline that does not grow (an acquire gave a later one): ZSCORE
	// tells it from a place that is gone.
	{"fair heartbeat, deadline not later", fairFamily, fairQueued, nil, []string{"fair_heartbeat", "B", "1000", "1", "0"}, 3},
	{"fair heartbeat, not queued", fairFamily, fairHeld, nil, []string{"fair_heartbeat", "B", "1000", farDeadline, "1"}, 3},
	// A's lock gone (expired with its floor): B's heartbeat finds the lock
	// free and hands it to B, first in line. This path reads TIME and
	// ignores the deadline sent.
	{"fair heartbeat, lock free", fairFamily, fairQueued, [][]string{{"DEL", "$B"}}, []string{"fair_heartbeat", "B", "1000", farDeadline, "0"}, 15},
	{"fair renew", fairFamily, fairHeld, nil, []string{"fair_renew", "A", "1000"}, 3},
	{"fair release, no waiters", fairFamily, fairHeld, nil, []string{"fair_release", "A", "1000"}, 3},
	{"fair release, hands over", fairFamily, fairQueued, nil, []string{"fair_release", "A", "1000"}, 6},
	{"fair acquire, handed (missed)", fairFamily, slices.Concat(fairQueued, [][]string{{"fair_release", "A", "1000"}}), nil,
		[]string{"fair_acquire", "B", "1000"}, 2},
	{"fair release by a waiter", fairFamily, fairQueued, nil, []string{"fair_release", "B", "1000"}, 4},

	{"read uncontended acquire", rwFamily, nil, nil, []string{"read_acquire", "R", "1000"}, 7},
	{"read acquire, own hold", rwFamily, [][]string{{"read_acquire", "R", "1000"}}, nil, []string{"read_acquire", "R", "1000"}, 7},
	{"read renew", rwFamily, [][]string{{"read_acquire", "R", "1000"}}, nil, []string{"read_renew", "R", "1000"}, 7},
	{"read release, last reader", rwFamily, [][]string{{"read_acquire", "R", "1000"}}, nil, []string{"read_release", "R", "1000"}, 9},
	{"write uncontended acquire", rwFamily, nil, nil, []string{"write_acquire", "W", "1000"}, 6},
	{"write acquire, own hold", rwFamily, [][]string{{"write_acquire", "W", "1000"}}, nil, []string{"write_acquire", "W", "1000"}, 5},
	{"write busy (readers)", rwFamily, [][]string{{"read_acquire", "R", "1000"}}, nil, []string{"write_acquire", "W", "1000"}, 4},
	{"write busy (writer)", rwFamily, [][]string{{"write_acquire", "A", "1000"}}, nil, []string{"write_acquire", "W", "1000"}, 3},
	// A claim a lease of 20 s long ends past the floor after the reader's
	// deadline: it moves both keys' TTLs.
	{"write busy, claim past the floor", rwFamily, [][]string{{"read_acquire", "R", "1000"}}, nil, []string{"write_acquire", "W", "20000"}, 6},
	{"write renew", rwFamily, [][]string{{"write_acquire", "W", "1000"}}, nil, []string{"write_renew", "W", "1000"}, 5},
	{"write release, no waiters", rwFamily, [][]string{{"write_acquire", "W", "1000"}}, nil, []string{"write_release", "W", "1000"}, 8},
	{"write release, claim withdrawn", rwFamily, [][]string{{"read_acquire", "R", "1000"}, {"write_acquire", "W", "1000"}}, nil,
		[]string{"write_release", "W", "1000"}, 7},

	{"semaphore uncontended acquire", semFamily, nil, nil, []string{"semaphore_acquire", "A", "1000", "2"}, 8},
	{"semaphore acquire, own permit", semFamily, [][]string{{"semaphore_acquire", "A", "1000", "2"}}, nil, []string{"semaphore_acquire", "A", "1000", "2"}, 7},
	{"semaphore busy", semFamily, [][]string{{"semaphore_acquire", "A", "1000", "1"}}, nil, []string{"semaphore_acquire", "B", "1000", "1"}, 7},
	{"semaphore busy, a waiter's retry", semFamily, [][]string{{"semaphore_acquire", "A", "1000", "1"}, {"semaphore_acquire", "B", "1000", "1"}}, nil, []string{"semaphore_acquire", "B", "1000", "1"}, 4},
	{"semaphore renew", semFamily, [][]string{{"semaphore_acquire", "A", "1000", "1"}}, nil, []string{"semaphore_renew", "A", "1000"}, 7},
	{"semaphore release, last holder", semFamily, [][]string{{"semaphore_acquire", "A", "1000", "1"}}, nil, []string{"semaphore_release", "A", "1000"}, 9},

	{"latch set", latchFamily, nil, nil, []string{"latch_set", "S", "1000", "2"}, 4},
	{"latch count down", latchFamily, latchSet, nil, []string{"latch_count_down", "P", "1000"}, 4},
	{"latch count down, again", latchFamily, latchCounted, nil, []string{"latch_count_down", "P", "1000"}, 3},
	{"latch count down, opens", latchFamily, latchCounted, nil, []string{"latch_count_down", "Q", "1000"}, 7},
	{"latch count", latchFamily, latchSet, nil, []string{"latch_count", "W", "1000"}, 2},
}

// Latch setups: set to 2, and counted down once by P.
var (
	latchSet     = [][]string{{"latch_set", "S", "1000", "2"}}
	latchCounted = [][]string{{"latch_set", "S", "1000", "2"}, {"latch_count_down", "P", "1000"}}
)

// TestCommandCost counts, with INFO commandstats on a private
// redis-server, the commands each script issues on its common paths, and
// fails when a path costs more or less than pinned (an improvement should
// update the table and the package documentation of lua).
func TestCommandCost(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	for _, s := range lua.All() {
		if err := rdb.ScriptLoad(ctx, s.Source).Err(); err != nil {
			t.Fatalf("SCRIPT LOAD %s: %v", s.Name, err)
		}
	}
	var report strings.Builder
	report.WriteString("Redis commands per script call:\n")
	for i, c := range costCases {
		sc := &scenario{name: fmt.Sprintf("cost%d", i), fam: c.fam}
		for _, call := range c.setup {
			evalCall(t, rdb, sc, withFence(t, rdb, sc, call))
		}
		for _, cmd := range c.raw {
			args := make([]any, len(cmd))
			for i, a := range cmd {
				args[i] = strings.ReplaceAll(a, "$B", sc.keyNames()[0])
			}
			if err := rdb.Do(ctx, args...).Err(); err != nil {
				t.Fatalf("%s: %v: %v", c.path, cmd, err)
			}
		}
		call := withFence(t, rdb, sc, c.call)
		if err := rdb.ConfigResetStat(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		evalCall(t, rdb, sc, call)
		counts := commandCounts(t, rdb)
		total := 0
		var names []string
		for name, n := range counts {
			total += n
			names = append(names, fmt.Sprintf("%s×%d", name, n))
		}
		sort.Strings(names)
		fmt.Fprintf(&report, "  %-36s %2d  %s\n", c.path, total, strings.Join(names, " "))
		if total != c.want {
			t.Errorf("%s: %d commands (%s), pinned at %d", c.path, total, strings.Join(names, " "), c.want)
		}
		if want, ok := costCommands[c.path]; ok && strings.Join(names, " ") != want {
			t.Errorf("%s: commands %s, want %s", c.path, strings.Join(names, " "), want)
		}
		if re, ok := costAfter[c.path]; ok {
			v, err := rdb.Get(ctx, sc.keyNames()[0]).Result()
			if re == nil && err != redis.Nil {
				t.Errorf("%s: B is %q (%v) after the call, want it gone: not the path measured", c.path, v, err)
			}
			if re != nil && (err != nil || !re.MatchString(v)) {
				t.Errorf("%s: B is %q (%v) after the call, want %s: not the path measured", c.path, v, err, re)
			}
		}
	}
	for path := range costAfter {
		if !slices.ContainsFunc(costCases, func(c costCase) bool { return c.path == path }) {
			t.Errorf("costAfter names %q, which is no row", path)
		}
	}
	for path := range costCommands {
		if !slices.ContainsFunc(costCases, func(c costCase) bool { return c.path == path }) {
			t.Errorf("costCommands names %q, which is no row", path)
		}
	}
	t.Log(report.String())
}

// withFence returns call with "$F" replaced by the fence of the holder's
// grant, read from B, or 0 if B is not the holder's.
func withFence(t *testing.T, rdb *redis.Client, sc *scenario, call []string) []string {
	t.Helper()
	i := slices.Index(call, "$F")
	if i < 0 {
		return call
	}
	fence := "0"
	v, err := rdb.Get(context.Background(), sc.keyNames()[0]).Result()
	if err != nil && err != redis.Nil {
		t.Fatal(err)
	}
	if rest, ok := strings.CutPrefix(v, call[1]+" "); ok {
		fence, _, _ = strings.Cut(rest, " ")
	}
	out := slices.Clone(call)
	out[i] = fence
	return out
}

func evalCall(t *testing.T, rdb *redis.Client, sc *scenario, call []string) {
	t.Helper()
	s, ok := lua.ByName(call[0])
	if !ok {
		t.Fatalf("no script %q", call[0])
	}
	args := []any{call[1], call[2], "PUBLISH"}
	for _, a := range call[3:] {
		args = append(args, a)
	}
	if err := rdb.EvalSha(context.Background(), s.SHA1, sc.keyNames(), args...).Err(); err != nil {
		t.Fatalf("%v: %v", call, err)
	}
}

// commandCounts reads INFO commandstats, leaving out the commands that ran
// the script and read the statistics.
func commandCounts(t *testing.T, rdb *redis.Client) map[string]int {
	t.Helper()
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		name = strings.TrimPrefix(name, "cmdstat_")
		if name == "evalsha" || name == "eval" || name == "info" || strings.HasPrefix(name, "config") {
			continue
		}
		calls, _, _ := strings.Cut(strings.TrimPrefix(rest, "calls="), ",")
		n, err := strconv.Atoi(calls)
		if err != nil {
			t.Fatalf("commandstats line %q: %v", line, err)
		}
		out[strings.ToUpper(name)] = n
	}
	return out
}

// TestCostTableDocumented: the cost table in the package documentation of
// lua names every pinned path with its pinned count, and nothing else.
func TestCostTableDocumented(t *testing.T) {
	src, err := os.ReadFile("../lua/doc.go")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`^//\t(\S.*?)\s{2,}(\d+)(\s|$)`)
	doc := map[string]int{}
	for _, line := range strings.Split(string(src), "\n") {
		m := row.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[2])
		doc[m[1]] = n
	}
	for _, c := range costCases {
		n, ok := doc[c.path]
		switch {
		case !ok:
			t.Errorf("lua/doc.go has no cost row %q", c.path)
		case n != c.want:
			t.Errorf("lua/doc.go: %q costs %d, pinned at %d", c.path, n, c.want)
		}
		delete(doc, c.path)
	}
	for path := range doc {
		t.Errorf("lua/doc.go has a cost row %q that TestCommandCost does not measure", path)
	}
}
