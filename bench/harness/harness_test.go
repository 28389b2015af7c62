package harness

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockgen/lockgen/redistest"
)

// The hot-key workload re-executes the test binary as its worker processes.
func TestMain(m *testing.M) {
	redistest.QuietGoRedisLogs() // its dial-failure lines would bury the output
	RunChildIfAsked()
	os.Exit(m.Run())
}

// serverProduct is the name the started server reports (redis, valkey),
// read off the program LOCKGEN_REDIS_SERVER selects.
func serverProduct() string {
	return strings.TrimSuffix(filepath.Base(redistest.ServerName()), "-server")
}

// TestQuickRunWritesWellFormedReport runs every workload for every peer a
// few iterations long (numbers meaningless) and checks the report's shape.
func TestQuickRunWritesWellFormedReport(t *testing.T) {
	opts := Quick()
	opts.Command = "go test"
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	res, err := Run(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	var md, svg bytes.Buffer
	if err := WriteMarkdown(&md, res, "handoff.svg"); err != nil {
		t.Fatal(err)
	}
	if err := WriteHandoffSVG(&svg, res); err != nil {
		t.Fatal(err)
	}
	report := md.String()

	for _, want := range []string{"## Targets for lockgen", "## 1. Uncontended", "## 2. One hot key, 4 goroutines", "## 3. Fairness", "## 4. 100 locks held", "## 5. One hot key, 4 goroutines in each of 2 and 8 processes", "![handoff latency", "](processes.svg)", "## 6. Many keys", "## 7. Redis memory per held lock", "](manykeys.svg)", "## 8. Idle waiters: 4 callers", "| server | " + serverProduct() + " ", "| command | `go test` |"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	checkTables(t, report)

	// Every peer ran: each one has a measured uncontended p50 and hot-key
	// throughput (a "—" there means it failed).
	for _, p := range opts.Peers {
		row := findRow(report, "## 1.", p.Name())
		if row == nil || (row[1] == "—" || row[4] == "—") && !failureNamed(report, p.Name()) {
			t.Errorf("uncontended row of %s missing or unmeasured (p50, Redis µs / cycle): %q", p.Name(), row)
		}
		row = findRow(report, "## 2.", p.Name())
		if row == nil || row[1] == "—" && !failureNamed(report, p.Name()) {
			t.Errorf("hot-key row of %s missing or unmeasured: %q", p.Name(), row)
		}
	}
	// Any cycle takes Redis some time, each command counted once.
	for _, u := range res.Reps[0].Uncontended {
		if u.Err == "" && !(u.RedisMicros > 0) {
			t.Errorf("%s: Redis time per uncontended cycle %v µs, want > 0", u.Peer, u.RedisMicros)
		}
	}
	// The targets of issue 14 that this run measures are there, with
	// their limits.
	targetRows := rowsOf(section(report, "## Targets"))
	for _, want := range [][]string{
		{"lockgen/mutex", "uncontended cycle p50 ÷ redislock/default's", "≤ 1.05"},
		{"lockgen/mutex", "Redis time per uncontended cycle (INFO commandstats, each command once) ÷ redislock/default's", "≤ 2"},
		{"lockgen/fair", "executed commands per grant, 8 processes × 4 goroutines", "≤ 16"},
		{"lockgen/mutex", "idle waiters, 4 waiters in 1 process: executed commands/s per waiting caller ((with waiters − holders alone) ÷ 4)", "≤ 0.2/s"},
		{"lockgen/semaphore, permits exhausted", "idle waiters, 2 processes × 2 waiters: executed commands/s per waiting caller ((with waiters − holders alone) ÷ 4)", "≤ 0.2/s"},
	} {
		if row := rowWith(targetRows, want...); row == nil || row[3] == "—" {
			t.Errorf("target row %q missing or unmeasured: %q", want, row)
		}
	}
	// Workload 5: a row per peer and process count, measured.
	rows5 := rowsOf(section(report, "## 5."))
	for _, p := range opts.ProcPeers {
		for _, procs := range opts.Processes {
			found := false
			for _, row := range rows5 {
				if row[0] == p.Name() && row[1] == fmt.Sprint(procs) {
					found = true
					if row[2] == "—" && !failureNamed(report, p.Name()) {
						t.Errorf("workload 5 row of %s at %d processes unmeasured: %q\n%s", p.Name(), procs, row, section(report, "## Errors"))
					}
				}
			}
			if !found {
				t.Errorf("workload 5 has no row for %s at %d processes", p.Name(), procs)
			}
		}
	}
	// Workloads 6 and 7: a measured row per peer (and goroutine count).
	rows6 := rowsOf(section(report, "## 6."))
	for _, p := range opts.ManyPeers {
		for _, g := range opts.ManyGoroutines {
			row := rowWith(rows6, p.Name(), fmt.Sprint(g))
			if row == nil || (row[2] == "—" || row[6] == "—" || row[7] == "—") && !failureNamed(report, p.Name()) {
				t.Errorf("workload 6 row of %s at %d goroutines missing or unmeasured: %q", p.Name(), g, row)
			}
		}
	}
	for _, p := range opts.MemoryPeers {
		row := findRow(report, "## 7.", p.Name())
		if row == nil || row[1] == "—" || row[2] == "—" {
			t.Errorf("workload 7 row of %s missing or unmeasured: %q", p.Name(), row)
		}
	}
	checkIdleWaiters(t, report, res)
	var many bytes.Buffer
	if err := WriteManyKeysSVG(&many, res); err != nil {
		t.Fatal(err)
	}
	var chart struct {
		Lines []struct {
			Points string `xml:"points,attr"`
		} `xml:"polyline"`
	}
	if err := xml.Unmarshal(many.Bytes(), &chart); err != nil {
		t.Fatalf("many-keys SVG is not well-formed XML: %v", err)
	}
	if len(chart.Lines) != len(opts.ManyPeers) {
		t.Errorf("many-keys chart has %d lines, want one per peer (%d)", len(chart.Lines), len(opts.ManyPeers))
	}
	for _, r := range res.Reps {
		for _, c := range append(r.Contended, r.Processes...) {
			if c.Overlaps != 0 {
				t.Errorf("%s, %d processes: %d grants overlapped the previous holder", c.Peer, c.Procs, c.Overlaps)
			}
		}
	}
	// Target results are computed, one of three words.
	targets := 0
	for _, row := range rowsOf(section(report, "## Targets")) {
		if res := row[len(row)-1]; res != "pass" && res != "FAIL" && res != "n/a" && res != "reported" {
			t.Errorf("target result %q", res)
		}
		targets++
	}
	if want := len(evaluateTargets(res)); targets != want {
		t.Errorf("%d target rows, want %d", targets, want)
	}

	var root struct {
		XMLName xml.Name `xml:"svg"`
		Rects   []struct {
			Width string `xml:"width,attr"`
		} `xml:"rect"`
	}
	if err := xml.Unmarshal(svg.Bytes(), &root); err != nil {
		t.Fatalf("SVG is not well-formed XML: %v", err)
	}
	// Background plus two bars per peer whose handoff was measured (in so
	// short a run, a polling peer's waiters may never get the lock).
	measured := 0
	for _, p := range opts.Peers {
		if c, ok := findContended(res.Reps[0], p.Name(), 4); ok && c.Handoff.N > 0 {
			measured++
		}
	}
	if measured < 2 {
		t.Errorf("handoff measured for %d peers only", measured)
	}
	if want := 1 + 2*measured; len(root.Rects) != want {
		t.Errorf("SVG has %d rects, want %d", len(root.Rects), want)
	}
}

// checkIdleWaiters: workload 8 has a measured row per row and shape, no
// waiter ever got a held lock, and a library that polls shows its polls.
func checkIdleWaiters(t *testing.T, report string, res *Results) {
	t.Helper()
	o := res.Opts
	rows := rowsOf(section(report, "## 8."))
	for _, row := range o.IdleRows {
		for _, procs := range o.IdleProcs {
			r := rowWith(rows, row.Name, row.Holder, idleShape(o.IdleWaiters, procs))
			if r == nil || r[3] == "—" || r[4] == "—" || r[5] == "—" || r[len(r)-1] != "0" {
				t.Errorf("workload 8 row of %s, %d processes, missing, unmeasured or with a waiter that got a held lock: %q", row.Name, procs, r)
			}
		}
	}
	// redislock/default polls every 100 ms with a script and a command or
	// two each time: far more than a command per second per waiter.
	for _, procs := range o.IdleProcs {
		s := overReps(res.Reps, idleMetric("redislock/default", procs, IdleWaitersResult.ExecutedPerWaiter))
		if !(s.Median > 1) {
			t.Errorf("redislock/default, %d processes: %v executed/s per waiter, want the polls (> 1)", procs, s.Median)
		}
	}
}

var separatorRow = regexp.MustCompile(`^\|( --- \|)+$`)

// checkTables: every Markdown table has a separator row after its header
// and the same number of cells in every row.
func checkTables(t *testing.T, md string) {
	t.Helper()
	lines := strings.Split(md, "\n")
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "|") {
			continue
		}
		header := cells(lines[i])
		if i+1 >= len(lines) || !separatorRow.MatchString(lines[i+1]) || len(cells(lines[i+1])) != len(header) {
			t.Errorf("line %d: table header without a matching separator: %q", i+1, lines[i])
		}
		j := i + 2
		for ; j < len(lines) && strings.HasPrefix(lines[j], "|"); j++ {
			if n := len(cells(lines[j])); n != len(header) {
				t.Errorf("line %d: %d cells, header has %d: %q", j+1, n, len(header), lines[j])
			}
		}
		i = j
	}
}

func cells(line string) []string {
	line = strings.TrimSpace(line)
	parts := strings.Split(strings.Trim(line, "|"), "|")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

// section returns the text from the heading starting with prefix to the
// next heading.
// failureNamed reports whether a "—" in peer's row is allowed: lockgen's
// own peers are always measured, but another library may get nothing done
// in a quick run's 300 ms windows on a loaded machine, and then the
// report's errors section must say so.
func failureNamed(report, peer string) bool {
	return !strings.HasPrefix(peer, "lockgen/") && strings.Contains(section(report, "## Errors"), "- "+peer+" (")
}

func section(md, prefix string) string {
	i := strings.Index(md, "\n"+prefix)
	if i < 0 {
		return ""
	}
	rest := md[i+1:]
	if j := strings.Index(rest[1:], "\n## "); j >= 0 {
		rest = rest[:j+1]
	}
	return rest
}

// rowsOf returns the body rows of the first table in text.
func rowsOf(text string) [][]string {
	var rows [][]string
	seenSep := false
	for _, line := range strings.Split(text, "\n") {
		switch {
		case separatorRow.MatchString(line):
			seenSep = true
		case seenSep && strings.HasPrefix(line, "|"):
			rows = append(rows, cells(line))
		case seenSep:
			return rows
		}
	}
	return rows
}

// rowWith returns the first row whose leading cells are want.
func rowWith(rows [][]string, want ...string) []string {
	for _, row := range rows {
		if len(row) >= len(want) && slices.Equal(row[:len(want)], want) {
			return row
		}
	}
	return nil
}

func findRow(md, sectionPrefix, first string) []string {
	for _, row := range rowsOf(section(md, sectionPrefix)) {
		if row[0] == first {
			return row
		}
	}
	return nil
}

func TestKeepWorkloads(t *testing.T) {
	o := Full()
	if err := o.KeepWorkloads("processes, held"); err != nil {
		t.Fatal(err)
	}
	if o.UncontendedIters != 0 || len(o.Goroutines) != 0 {
		t.Errorf("uncontended and hot key kept: %d iterations, goroutines %v", o.UncontendedIters, o.Goroutines)
	}
	if len(o.Processes) == 0 || len(o.HeldPeers) == 0 {
		t.Errorf("processes or held left out: %v, %d peers", o.Processes, len(o.HeldPeers))
	}
	err := o.KeepWorkloads("processes,procs")
	if err == nil || !strings.Contains(err.Error(), `"procs"`) || !strings.Contains(err.Error(), "uncontended, hotkey, held, processes") {
		t.Errorf("unknown workload: error %v, want the name and the choices", err)
	}
}
