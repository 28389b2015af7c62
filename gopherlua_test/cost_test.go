package gopherlua_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockgen/lockgen/lua"
	"github.com/lockgen/lockgen/redistest"
)

// costCase is one path through one script: setup calls, then the measured
// call, and the number of Redis commands the script may issue on that path.
type costCase struct {
	path  string
	fam   family
	setup [][]string // script name, holder, lease ms[, permits]
	// state, if set, is written to B with a one-minute TTL after setup: a
	// state that lives too briefly to be reached reliably by script calls
	// on a busy machine (a mutex reservation lasts 10 ms).
	state string
	call  []string
	want  int
}

// reservation is what a contended mutex release leaves for the waiters.
const reservation = "! 0 1700000000000000 1"

// heldWithHeir: A holds the mutex, B got busy and is its heir.
var heldWithHeir = [][]string{{"mutex_acquire", "A", "1000"}, {"mutex_acquire", "B", "1000"}}

// handedToHeir: A's release handed the mutex to its heir B.
var handedToHeir = [][]string{{"mutex_acquire", "A", "1000"}, {"mutex_acquire", "B", "1000"}, {"mutex_release", "A", "1000"}}

// costAfter: for the paths that the setup alone does not make certain, B
// after the measured call, so that a row measures the path it names.
var costAfter = map[string]*regexp.Regexp{
	"mutex busy, becomes heir":        regexp.MustCompile(`^A 1 \d+ 1 B \d+$`),
	"mutex busy, heir again":          regexp.MustCompile(`^A 1 \d+ 1 B \d+$`),
	"mutex busy, live heir":           regexp.MustCompile(`^A 1 \d+ 1 B \d+$`),
	"mutex busy, once":                regexp.MustCompile(`^A 1 \d+ 0$`),
	"mutex release, hands over":       regexp.MustCompile(`^B 1 \d+ 1$`),
	"mutex release, waiters, no heir": regexp.MustCompile(`^! 0 \d+ 1$`),
	"mutex claim (retry, handed)":     regexp.MustCompile(`^B 1 \d+ 1$`),
	"mutex claim (waited, handed)":    regexp.MustCompile(`^B 1 \d+ 1$`),
	"mutex_leave, heir":               regexp.MustCompile(`^A 1 \d+ 1$`),
	"mutex_leave, not heir":           regexp.MustCompile(`^A 1 \d+ 1 B \d+$`),
	"mutex_leave, grant to new heir":  regexp.MustCompile(`^C 1 \d+ 1$`),
	"mutex_leave, grant reserved":     regexp.MustCompile(`^! 0 \d+ 1$`),
}

// costCases pin the common paths. The package documentation of lua carries
// the same table; change both together.
var costCases = []costCase{
	{"mutex uncontended acquire", mutexFamily, nil, "", []string{"mutex_acquire", "A", "1000"}, 3},
	{"mutex reentrant acquire", mutexFamily, [][]string{{"mutex_acquire", "A", "1000"}}, "", []string{"mutex_acquire", "A", "1000"}, 2},
	{"mutex busy, becomes heir", mutexFamily, [][]string{{"mutex_acquire", "A", "1000"}}, "", []string{"mutex_acquire", "B", "1000"}, 4},
	{"mutex busy, heir again", mutexFamily, heldWithHeir, "", []string{"mutex_acquire", "B", "1000", "retry"}, 4},
	{"mutex busy, live heir", mutexFamily, heldWithHeir, "", []string{"mutex_acquire", "C", "1000"}, 3},
	{"mutex busy, once", mutexFamily, [][]string{{"mutex_acquire", "A", "1000"}}, "", []string{"mutex_acquire", "B", "1000", "once"}, 2},
	{"mutex renew", mutexFamily, [][]string{{"mutex_acquire", "A", "1000"}}, "", []string{"mutex_renew", "A", "1000"}, 2},
	{"mutex release, no waiters", mutexFamily, [][]string{{"mutex_acquire", "A", "1000"}}, "", []string{"mutex_release", "A", "1000"}, 3},
	{"mutex release, hands over", mutexFamily, heldWithHeir, "", []string{"mutex_release", "A", "1000"}, 4},
	{"mutex release, waiters, no heir", mutexFamily, slices.Concat(heldWithHeir, [][]string{{"mutex_leave", "B", "1000"}}), "", []string{"mutex_release", "A", "1000"}, 4},
	{"mutex release, reentrant", mutexFamily, [][]string{{"mutex_acquire", "A", "1000"}, {"mutex_acquire", "A", "1000"}}, "", []string{"mutex_release", "A", "1000"}, 2},
	{"mutex busy (reserved)", mutexFamily, nil, reservation, []string{"mutex_acquire", "C", "1000"}, 2},
	{"mutex acquire, reserved, waited", mutexFamily, nil, reservation, []string{"mutex_acquire", "B", "1000", "waited"}, 3},
	{"mutex claim (retry, handed)", mutexFamily, handedToHeir, "", []string{"mutex_acquire", "B", "1000", "retry"}, 2},
	{"mutex claim (waited, handed)", mutexFamily, handedToHeir, "", []string{"mutex_acquire", "B", "1000", "waited"}, 2},
	{"mutex_leave, heir", mutexFamily, heldWithHeir, "", []string{"mutex_leave", "B", "1000"}, 2},
	{"mutex_leave, not heir", mutexFamily, heldWithHeir, "", []string{"mutex_leave", "C", "1000"}, 1},
	{"mutex_leave, grant to new heir", mutexFamily, slices.Concat(handedToHeir, [][]string{{"mutex_acquire", "C", "1000"}}), "", []string{"mutex_leave", "B", "1000"}, 4},
	{"mutex_leave, grant reserved", mutexFamily, handedToHeir, "", []string{"mutex_leave", "B", "1000"}, 4},

	{"fair uncontended acquire", fairFamily, nil, "", []string{"fair_acquire", "A", "1000"}, 4},
	{"fair reentrant acquire", fairFamily, [][]string{{"fair_acquire", "A", "1000"}}, "", []string{"fair_acquire", "A", "1000"}, 4},
	{"fair busy (joins queue)", fairFamily, [][]string{{"fair_acquire", "A", "1000"}}, "", []string{"fair_acquire", "B", "1000"}, 11},
	{"fair busy (queued)", fairFamily, [][]string{{"fair_acquire", "A", "1000"}, {"fair_acquire", "B", "1000"}}, "", []string{"fair_acquire", "B", "1000"}, 10},
	{"fair heartbeat", fairFamily, [][]string{{"fair_acquire", "A", "1000"}, {"fair_acquire", "B", "1000"}}, "", []string{"fair_heartbeat", "B", "1000"}, 9},
	{"fair renew", fairFamily, [][]string{{"fair_acquire", "A", "1000"}}, "", []string{"fair_renew", "A", "1000"}, 4},
	{"fair release, no waiters", fairFamily, [][]string{{"fair_acquire", "A", "1000"}}, "", []string{"fair_release", "A", "1000"}, 4},
	{"fair heartbeat, empty queue", fairFamily, [][]string{{"fair_acquire", "A", "1000"}}, "", []string{"fair_heartbeat", "B", "1000"}, 3},
	{"fair release, hands over", fairFamily, [][]string{{"fair_acquire", "A", "1000"}, {"fair_acquire", "B", "1000"}}, "", []string{"fair_release", "A", "1000"}, 10},
	{"fair claim (waited, handed)", fairFamily, [][]string{{"fair_acquire", "A", "1000"}, {"fair_acquire", "B", "1000"}, {"fair_release", "A", "1000"}}, "", []string{"fair_acquire", "B", "1000", "waited"}, 4},

	{"read uncontended acquire", rwFamily, nil, "", []string{"read_acquire", "R", "1000"}, 7},
	{"read reentrant acquire", rwFamily, [][]string{{"read_acquire", "R", "1000"}}, "", []string{"read_acquire", "R", "1000"}, 7},
	{"read renew", rwFamily, [][]string{{"read_acquire", "R", "1000"}}, "", []string{"read_renew", "R", "1000"}, 7},
	{"read release, last reader", rwFamily, [][]string{{"read_acquire", "R", "1000"}}, "", []string{"read_release", "R", "1000"}, 7},
	{"write uncontended acquire", rwFamily, nil, "", []string{"write_acquire", "W", "1000"}, 7},
	{"write busy (readers)", rwFamily, [][]string{{"read_acquire", "R", "1000"}}, "", []string{"write_acquire", "W", "1000"}, 8},
	{"write renew", rwFamily, [][]string{{"write_acquire", "W", "1000"}}, "", []string{"write_renew", "W", "1000"}, 5},
	{"write release, no waiters", rwFamily, [][]string{{"write_acquire", "W", "1000"}}, "", []string{"write_release", "W", "1000"}, 6},

	{"semaphore uncontended acquire", semFamily, nil, "", []string{"semaphore_acquire", "A", "1000", "2"}, 8},
	{"semaphore busy", semFamily, [][]string{{"semaphore_acquire", "A", "1000", "1"}}, "", []string{"semaphore_acquire", "B", "1000", "1"}, 8},
	{"semaphore renew", semFamily, [][]string{{"semaphore_acquire", "A", "1000", "1"}}, "", []string{"semaphore_renew", "A", "1000"}, 7},
	{"semaphore release, last holder", semFamily, [][]string{{"semaphore_acquire", "A", "1000", "1"}}, "", []string{"semaphore_release", "A", "1000"}, 7},
}

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
			evalCall(t, rdb, sc, call)
		}
		if c.state != "" {
			if err := rdb.Set(ctx, sc.keyNames()[0], c.state, time.Minute).Err(); err != nil {
				t.Fatal(err)
			}
		}
		if err := rdb.ConfigResetStat(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		evalCall(t, rdb, sc, c.call)
		counts := commandCounts(t, rdb)
		total := 0
		var names []string
		for name, n := range counts {
			total += n
			names = append(names, fmt.Sprintf("%s×%d", name, n))
		}
		sort.Strings(names)
		fmt.Fprintf(&report, "  %-32s %2d  %s\n", c.path, total, strings.Join(names, " "))
		if total != c.want {
			t.Errorf("%s: %d commands (%s), pinned at %d", c.path, total, strings.Join(names, " "), c.want)
		}
		if re := costAfter[c.path]; re != nil {
			if v, err := rdb.Get(ctx, sc.keyNames()[0]).Result(); err != nil || !re.MatchString(v) {
				t.Errorf("%s: B is %q (%v) after the call, want %s: not the path measured", c.path, v, err, re)
			}
		}
	}
	for path := range costAfter {
		if !slices.ContainsFunc(costCases, func(c costCase) bool { return c.path == path }) {
			t.Errorf("costAfter names %q, which is no row", path)
		}
	}
	t.Log(report.String())
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
