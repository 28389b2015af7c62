// Command lockbench measures lockgen next to redsync, bsm/redislock and
// rueidislock against a redis-server it starts on loopback, and writes the
// Markdown report and the handoff chart. See package harness for what is
// measured and how.
//
//	cd bench && go run ./cmd/lockbench -out ../docs/benchmarks.md
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/lockgen/lockgen/bench/harness"
)

func main() {
	harness.RunChildIfAsked()
	os.Exit(run(os.Args[1:], os.Stderr))
}

func run(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("lockbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "benchmarks.md", "Markdown report to write")
	svg := fs.String("svg", "", "handoff chart to write (default: handoff.svg next to -out); "+harness.ProcessesChartFile+" goes next to it")
	quick := fs.Bool("quick", false, "a few iterations of everything, to check the harness (numbers meaningless)")
	reps := fs.Int("reps", 0, "repetitions of every workload (default 3, manykeys 5, idlewaiters 2; 1 with -quick)")
	idleWindow := fs.Duration("idle-window", 0, "idlewaiters: each measured window (default 60s, two leases; 300ms with -quick)")
	only := fs.String("peers", "", "comma-separated peers to run, e.g. lockgen/mutex,rueidislock/tuned (default all)")
	workloads := fs.String("workloads", "", "comma-separated workloads to run, some of "+strings.Join(harness.Workloads, ",")+" (default all)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var err error
	opts := harness.Full()
	if *quick {
		opts = harness.Quick()
	}
	if *reps > 0 {
		opts.SetReps(*reps)
	}
	if *idleWindow > 0 {
		opts.IdleWindow = *idleWindow
	}
	if *only != "" {
		if opts.Peers, err = harness.SelectPeers(opts.Peers, *only); err != nil {
			fmt.Fprintf(stderr, "lockbench: %v\n", err)
			return 2
		}
		opts.HeldPeers, _ = harness.SelectPeers(opts.HeldPeers, *only)
		opts.ProcPeers, _ = harness.SelectPeers(opts.ProcPeers, *only)
		opts.ManyPeers, _ = harness.SelectPeers(opts.ManyPeers, *only)
		opts.MemoryPeers, _ = harness.SelectPeers(opts.MemoryPeers, *only)
		opts.IdleRows = harness.SelectIdleRows(opts.IdleRows, *only)
	}
	if *workloads != "" {
		if err := opts.KeepWorkloads(*workloads); err != nil {
			fmt.Fprintf(stderr, "lockbench: %v\n", err)
			return 2
		}
	}
	if *svg == "" {
		*svg = filepath.Join(filepath.Dir(*out), "handoff.svg")
	}
	opts.Command = "cd bench && go run ./cmd/lockbench " + strings.Join(args, " ")
	opts.Log = stderr
	var res *harness.Results
	res, err = harness.Run(context.Background(), opts)
	if err != nil {
		fmt.Fprintf(stderr, "lockbench: %v\n", err)
		return 1
	}
	if err := harness.WriteFiles(res, *out, *svg); err != nil {
		fmt.Fprintf(stderr, "lockbench: %v\n", err)
		return 1
	}
	fmt.Fprintf(stderr, "lockbench: wrote %s and the charts next to %s in %v\n", *out, *svg, res.Elapsed.Round(1e9))
	return 0
}
