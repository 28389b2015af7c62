package harness

import (
	"bytes"
	"context"
	"encoding/xml"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/lockgen/lockgen/bench/peers"
	"github.com/lockgen/lockgen/redistest"
)

// Workload 5, briefly, for both lockgen kinds: every process takes part,
// the lock excludes across all of them, and what a grant cost Redis is
// counted.
func TestProcessesWorkloadRunsEveryProcess(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	o := Quick()
	o.Processes = []int{2, 8}
	o.ProcDuration = 400 * time.Millisecond
	o.ProcPeers = nil
	for _, name := range []string{"lockgen/mutex", "lockgen/fair"} {
		p, _ := peers.ByName(name)
		o.ProcPeers = append(o.ProcPeers, p)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	available := func(string) (bool, string) { return false, "" }
	results := runProcesses(ctx, srv.Addr, rdb, o, o.ProcPeers, available, t.Logf)

	if want := len(o.Processes) * len(o.ProcPeers); len(results) != want {
		t.Fatalf("%d results, want %d", len(results), want)
	}
	for _, c := range results {
		if c.Err != "" || c.Errors != 0 {
			t.Errorf("%s at %d processes: %d errors, first %q", c.Peer, c.Procs, c.Errors, c.Err)
		}
		if c.Goroutines != c.Procs*o.ProcGoroutines {
			t.Errorf("%s at %d processes: %d goroutines, want %d", c.Peer, c.Procs, c.Goroutines, c.Procs*o.ProcGoroutines)
		}
		if c.ProcsSeen != c.Procs {
			t.Errorf("%s: requests came from %d processes, want %d", c.Peer, c.ProcsSeen, c.Procs)
		}
		if c.Grants == 0 {
			t.Errorf("%s at %d processes: no grant in the window", c.Peer, c.Procs)
		}
		if c.Overlaps != 0 {
			t.Errorf("%s at %d processes: %d grants overlapped the previous holder", c.Peer, c.Procs, c.Overlaps)
		}
		if e := c.ExecutedPerGrant; math.IsNaN(e) || math.IsInf(e, 0) || e <= 0 {
			t.Errorf("%s at %d processes: executed per grant %v, want finite and > 0", c.Peer, c.Procs, e)
		}
		// A grant is at least one script call, counted by the server.
		if c.ExecutedPerGrant < 1 || c.CommandsPerGrant < 1 {
			t.Errorf("%s at %d processes: executed %.2f, sent %.2f per grant; each grant takes at least one command", c.Peer, c.Procs, c.ExecutedPerGrant, c.CommandsPerGrant)
		}
		if c.ServerCPUPerGrant < 0 {
			t.Errorf("%s at %d processes: Redis CPU per grant %v", c.Peer, c.Procs, c.ServerCPUPerGrant)
		}
	}
}

// processResult is a workload-5 run with only what the targets read.
func processResult(peer string, procs int, executed float64, handoff time.Duration) ContendedResult {
	return ContendedResult{
		Peer: peer, Procs: procs, Goroutines: 4 * procs, Grants: 100, ExecutedPerGrant: executed,
		Handoff: Latency{N: 50, P50: handoff}, Ping: Latency{N: 50, P50: 100 * time.Microsecond},
	}
}

func processOptions() Options {
	o := Options{Processes: []int{2, 8}, ProcGoroutines: 4}
	for _, name := range []string{"lockgen/mutex", "lockgen/fair", "redsync/tuned"} {
		p, _ := peers.ByName(name)
		o.ProcPeers = append(o.ProcPeers, p)
	}
	return o
}

func targetResults(ts []Target) map[string]string {
	out := map[string]string{}
	for _, t := range ts {
		out[t.Peer+" | "+t.What] = t.Result()
	}
	return out
}

// The command targets compare the most processes with the fewest inside
// each repetition; the handoff targets compare with the best other library
// at the most processes. Today's mutex (10 + 4(P-1) per grant) fails both
// command rows. Fair has a limit of its own on the absolute row only.
func TestProcessTargets(t *testing.T) {
	rep := func(mutex2, mutex8 float64, mutexHandoff8 time.Duration) Rep {
		return Rep{Processes: []ContendedResult{
			processResult("lockgen/mutex", 2, mutex2, 250*time.Microsecond),
			processResult("lockgen/mutex", 8, mutex8, mutexHandoff8),
			processResult("lockgen/fair", 2, 15, 250*time.Microsecond),
			processResult("lockgen/fair", 8, 25, 250*time.Microsecond),
			processResult("redsync/tuned", 2, 25, 200*time.Microsecond),
			processResult("redsync/tuned", 8, 87, 300*time.Microsecond),
		}}
	}
	fairRep := func(fair8 float64) Rep {
		r := rep(10, 11, 250*time.Microsecond)
		for i, c := range r.Processes {
			if c.Peer == "lockgen/fair" && c.Procs == 8 {
				r.Processes[i].ExecutedPerGrant = fair8
			}
		}
		return r
	}
	const (
		growth   = "lockgen/mutex | executed commands per grant, 8 processes ÷ 2 processes (4 goroutines each)"
		absolute = "lockgen/mutex | executed commands per grant, 8 processes × 4 goroutines"
		fairAbs  = "lockgen/fair | executed commands per grant, 8 processes × 4 goroutines"
		fairGrow = "lockgen/fair | executed commands per grant, 8 processes ÷ 2 processes (4 goroutines each)"
		rtts     = "lockgen/mutex | handoff p50 in PING round trips, 8 processes × 4 goroutines"
		vsBest   = "lockgen/mutex | lockgen ÷ best other library, handoff p50, 8 processes × 4 goroutines"
	)
	cases := []struct {
		name string
		reps []Rep
		want map[string]string
	}{
		{"today's mutex", []Rep{rep(14, 38, 250*time.Microsecond)},
			map[string]string{growth: "FAIL", absolute: "FAIL", fairAbs: "FAIL", fairGrow: "reported", rtts: "pass", vsBest: "pass"}},
		{"flat mutex", []Rep{rep(10, 11, 250*time.Microsecond)},
			map[string]string{growth: "pass", absolute: "pass", rtts: "pass", vsBest: "pass"}},
		{"flat but over 12", []Rep{rep(10, 13, 250*time.Microsecond)},
			map[string]string{growth: "pass", absolute: "FAIL"}},
		{"lean fair", []Rep{fairRep(15.6)}, map[string]string{fairAbs: "pass", fairGrow: "reported"}},
		{"fair over 16", []Rep{fairRep(16.4)}, map[string]string{fairAbs: "FAIL"}},
		{"slow handoff", []Rep{rep(10, 11, 340*time.Microsecond)},
			map[string]string{rtts: "FAIL", vsBest: "FAIL"}},
		// Ratios inside each repetition, 1.4, 1.4 and 2.0, have the median
		// 1.4; the medians of the figures, 20 and 40, would make 2.0.
		{"ratio per repetition", []Rep{rep(10, 14, 250*time.Microsecond), rep(30, 42, 250*time.Microsecond), rep(20, 40, 250*time.Microsecond)},
			map[string]string{growth: "pass"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := targetResults(processTargets(&Results{Opts: processOptions(), Reps: tc.reps}))
			for what, want := range tc.want {
				if got[what] != want {
					t.Errorf("%s: %q, want %q (all: %v)", what, got[what], want, got)
				}
			}
		})
	}
}

// A missing run reads n/a, never pass.
func TestProcessTargetsWithoutMeasurements(t *testing.T) {
	ts := processTargets(&Results{Opts: processOptions(), Reps: []Rep{{}}})
	if len(ts) == 0 {
		t.Fatal("no targets")
	}
	for _, tg := range ts {
		if tg.Result() != "n/a" {
			t.Errorf("%s %s: %s without a measurement", tg.Peer, tg.What, tg.Result())
		}
	}
}

// The chart is well-formed, the same bytes for the same results, and has a
// line per lockgen kind with a marked point per process count.
func TestProcessesSVG(t *testing.T) {
	res := &Results{Opts: processOptions(), Reps: []Rep{{Processes: []ContendedResult{
		processResult("lockgen/mutex", 2, 14, 250*time.Microsecond),
		processResult("lockgen/mutex", 8, 38, 250*time.Microsecond),
		processResult("lockgen/fair", 2, 24, 250*time.Microsecond),
		processResult("lockgen/fair", 8, 25, 250*time.Microsecond),
	}}}}
	var a, b bytes.Buffer
	if err := WriteProcessesSVG(&a, res); err != nil {
		t.Fatal(err)
	}
	if err := WriteProcessesSVG(&b, res); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("two charts of the same results differ")
	}
	var root struct {
		XMLName   xml.Name   `xml:"svg"`
		Polylines []struct{} `xml:"polyline"`
		Circles   []struct{} `xml:"circle"`
	}
	if err := xml.Unmarshal(a.Bytes(), &root); err != nil {
		t.Fatalf("SVG is not well-formed XML: %v", err)
	}
	if len(root.Polylines) != 2 || len(root.Circles) != 4 {
		t.Errorf("%d lines and %d points, want 2 and 4", len(root.Polylines), len(root.Circles))
	}
	for _, label := range []string{">38.0<", ">24.0<", "mutex limit at 8 processes: 12"} {
		if !strings.Contains(a.String(), label) {
			t.Errorf("chart lacks %q", label)
		}
	}
}
