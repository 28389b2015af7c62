package harness

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockgen/lockgen/bench/internal/serverprobe"
	"github.com/lockgen/lockgen/bench/peers"
)

// ContendedResult is one hot-key run of one peer (workloads 2, 3 and 5):
// Goroutines goroutines in Procs processes take turns on one key, each
// holding it for about Hold.
type ContendedResult struct {
	Peer       string
	Procs      int // worker processes
	Goroutines int // in all processes together

	// Ping: PING round trips timed during the run from the parent process,
	// so under the same load of machine and server as the handoffs.
	Ping Latency

	Grants     int     // grants inside the measured window
	Throughput float64 // grants per second inside the window
	// Handoff: from a holder calling Unlock to the lock going to a request
	// that was already waiting then (see handoffAfter).
	Handoff Latency
	// NextGrant: from a release to the next grant to anyone, the releaser
	// asking again included, when a waiter was there at the release: how
	// long the lock sits idle while in demand.
	NextGrant Latency
	// Wait: from Lock called to Lock returned (fairness: its spread).
	Wait Latency
	// OutOfOrder: share of grants given while an earlier arrival still
	// waited.
	OutOfOrder float64
	Unserved   int // requests still waiting when the run ended
	// ProcsSeen is how many worker processes made a request: all of them,
	// unless one never got to run.
	ProcsSeen int

	CallsPerGrant     float64       // round trips sent by the clients
	CommandsPerGrant  float64       // commands sent by the clients, Pub/Sub included
	ExecutedPerGrant  float64       // commands Redis executed, those inside scripts included
	CommandMix        string        // the commands Redis executed most, per grant
	ServerCPUPerGrant time.Duration // redis-server CPU time (user + sys) per grant

	Overlaps int    // grants that began before the previous holder released: must be 0
	Errors   int    // Lock or Unlock errors other than the end of the run
	Err      string // why the run failed, or the first Lock/Unlock error
}

// pingEvery spaces the PINGs timed during a hot-key run: often enough for a
// p50, rarely enough not to load the server (they are not counted as the
// libraries' commands).
const pingEvery = 2 * time.Millisecond

// pingDuring times PINGs on a connection of its own from start to end.
func pingDuring(ctx context.Context, addr string, start, end time.Time) Latency {
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	rdb.Ping(ctx) // connect before the run
	time.Sleep(time.Until(start))
	var sample []time.Duration
	for time.Now().Before(end) {
		t0 := time.Now()
		if err := rdb.Ping(ctx).Err(); err != nil {
			break
		}
		sample = append(sample, time.Since(t0))
		time.Sleep(pingEvery)
	}
	return summarize(sample)
}

// contendedWarmup is left out of the measured window at its start: children
// subscribe and fill their pools in the first moments.
const contendedWarmupShare = 10 // percent of the duration

// hotKeyProcs is how many processes workloads 2 and 3 split their
// goroutines over.
const hotKeyProcs = 2

// hotKeyShape is how a hot-key run spreads its goroutines: Goroutines in
// all, split as evenly as possible over Procs worker processes.
type hotKeyShape struct {
	Procs      int
	Goroutines int
}

// perProc is how many goroutines worker process i runs.
func (s hotKeyShape) perProc(i int) int {
	n := s.Goroutines / s.Procs
	if i < s.Goroutines%s.Procs {
		n++
	}
	return n
}

// runContended runs one hot-key run: the worker processes take turns on one
// key for dur, and the parent times PINGs and reads the server's counters
// around them.
func runContended(ctx context.Context, addr string, rdb *redis.Client, p peers.Peer, shape hotKeyShape, dur, hold time.Duration) ContendedResult {
	res := ContendedResult{Peer: p.Name(), Procs: shape.Procs, Goroutines: shape.Goroutines}
	fail := func(err error) ContendedResult {
		res.Err = err.Error()
		return res
	}
	if err := resetServer(ctx, rdb); err != nil {
		return fail(err)
	}
	children, err := startChildren(addr, p, shape, dur, hold)
	defer stopChildren(children)
	if err != nil {
		return fail(err)
	}
	// The counters start after the warm-up of every child.
	if err := rdb.ConfigResetStat(ctx).Err(); err != nil {
		return fail(err)
	}
	start := time.Now().Add(50 * time.Millisecond)
	end := start.Add(dur)
	for _, ch := range children {
		if err := ch.begin(start, end); err != nil {
			return fail(err)
		}
	}
	cpuBefore, err := serverprobe.CPU(ctx, rdb)
	if err != nil {
		return fail(err)
	}
	pings := make(chan Latency, 1)
	go func() { pings <- pingDuring(ctx, addr, start, end) }()
	grants, counts, err := collectReports(children, &res)
	res.Ping = <-pings
	if err != nil {
		return fail(err)
	}
	cpuAfter, err := serverprobe.CPU(ctx, rdb)
	if err != nil {
		return fail(err)
	}
	stats, err := readCommandStats(ctx, rdb)
	if err != nil {
		return fail(err)
	}
	winStart := start.Add(dur * contendedWarmupShare / 100).UnixNano()
	analyzeGrants(&res, grants, winStart, end.UnixNano())
	chargeGrants(&res, grants, counts, stats, cpuAfter-cpuBefore)
	return res
}

// startChildren starts the worker processes of a hot-key run and waits
// until each is connected and warmed up. The children it returns (some may
// be nil after an error) must be stopped.
func startChildren(addr string, p peers.Peer, shape hotKeyShape, dur, hold time.Duration) ([]*childProc, error) {
	specs := make([]childSpec, shape.Procs)
	for i := range specs {
		specs[i] = childSpec{Addr: addr, Peer: p.Name(), Proc: i, Goroutines: shape.perProc(i), Hold: hold, Key: "hot"}
	}
	return startReadyChildren(specs, dur+2*childReadyTimeout)
}

// startReadyChildren starts one worker process per spec, each killed after
// limit, and waits until each is connected and warmed up: a run measures
// from a start line sent to children that are all ready. The children it
// returns (some may be nil after an error) must be stopped.
func startReadyChildren(specs []childSpec, limit time.Duration) ([]*childProc, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	children := make([]*childProc, len(specs))
	for i, spec := range specs {
		ch, err := startChild(exe, spec, limit)
		if err != nil {
			return children, err
		}
		children[i] = ch
	}
	for _, ch := range children {
		if err := ch.waitReady(); err != nil {
			return children, err
		}
	}
	return children, nil
}

func stopChildren(children []*childProc) {
	for _, ch := range children {
		if ch != nil {
			ch.stop()
		}
	}
}

// collectReports reads every child's report: their grants, the commands
// their clients sent, and their Lock/Unlock errors (counted into res).
func collectReports(children []*childProc, res *ContendedResult) ([]grant, peers.Counts, error) {
	var grants []grant
	var counts peers.Counts
	for _, ch := range children {
		rep, err := ch.report()
		if err != nil {
			return nil, counts, err
		}
		grants = append(grants, rep.Grants...)
		counts.Calls += rep.Counts.Calls
		counts.Commands += rep.Counts.Commands
		res.Errors += rep.Errors
		if res.Err == "" && rep.Error != "" {
			res.Err = rep.Error
		}
	}
	return grants, counts, nil
}

// chargeGrants divides what the run cost, in the clients and in the server,
// by every grant it gave: the counters ran for the whole run, warm-up
// window included, so every grant of the run shares them.
func chargeGrants(res *ContendedResult, grants []grant, counts peers.Counts, stats commandStats, cpuSeconds float64) {
	all := 0
	for _, g := range grants {
		if g.Acq != 0 {
			all++
		}
	}
	if all == 0 {
		return
	}
	n := float64(all)
	res.CallsPerGrant = float64(counts.Calls) / n
	res.CommandsPerGrant = float64(counts.Commands+stats.pubsub()) / n
	res.ExecutedPerGrant = float64(stats.total()) / n
	res.CommandMix = commandMix(stats, n)
	res.ServerCPUPerGrant = time.Duration(cpuSeconds / n * float64(time.Second))
}

// analyzeGrants derives throughput, handoff, waits and arrival order.
func analyzeGrants(res *ContendedResult, grants []grant, winStart, winEnd int64) {
	var served []grant
	procs := map[int]bool{}
	for _, g := range grants {
		procs[g.Proc] = true
		switch {
		case g.Acq != 0:
			served = append(served, g)
		case !g.Failed:
			res.Unserved++
		}
	}
	res.ProcsSeen = len(procs)
	slices.SortFunc(served, func(a, b grant) int { return cmp.Compare(a.Acq, b.Acq) })
	inWindow := func(g grant) bool { return g.Acq >= winStart && g.Acq <= winEnd }

	var handoffs, nextGrants, waits []time.Duration
	for i, g := range served {
		if !inWindow(g) {
			continue
		}
		res.Grants++
		waits = append(waits, time.Duration(g.Acq-g.Req))
		if i == 0 {
			continue
		}
		if g.Acq < served[i-1].Rel {
			res.Overlaps++
		}
	}
	for i, g := range served {
		if !inWindow(g) {
			continue
		}
		if d, ok := handoffAfter(served, i); ok {
			handoffs = append(handoffs, d)
			nextGrants = append(nextGrants, time.Duration(served[i+1].Acq-g.Rel))
		}
	}
	res.Handoff = summarize(handoffs)
	res.NextGrant = summarize(nextGrants)
	res.Wait = summarize(waits)
	if w := time.Duration(winEnd - winStart); w > 0 {
		res.Throughput = float64(res.Grants) / w.Seconds()
	}
	if res.Grants > 0 {
		res.OutOfOrder = float64(countOutOfOrder(grants, served, inWindow)) / float64(res.Grants)
	} else if res.Err == "" {
		// The report's "—" then says why (writeErrors).
		res.Err = fmt.Sprintf("no grant in the measured window: %d granted outside it, %d requests unserved, %d failed", len(served), res.Unserved, res.Errors)
	}
}

// handoffAfter is the time from served[i]'s release until the lock went to
// a request that was already waiting at that release. Grants in between to
// requests made later (typically the releaser asking again and barging in)
// do not end the handoff: for the waiters the lock has not moved yet. ok is
// false when no waiter was served after that release.
func handoffAfter(served []grant, i int) (time.Duration, bool) {
	rel := served[i].Rel
	for _, g := range served[i+1:] {
		if g.Req <= rel {
			return time.Duration(g.Acq - rel), true
		}
	}
	return 0, false
}

// countOutOfOrder walks the grants in the order they were given and counts
// those given while a request that arrived earlier was still waiting.
// Requests unserved at the end wait until the end; failed ones are left out.
func countOutOfOrder(all, served []grant, count func(grant) bool) int {
	type req struct {
		at     int64
		served bool
	}
	type id struct {
		proc, g int
		at      int64
	}
	var arrivals []*req
	byID := map[id]*req{}
	for _, g := range all {
		if g.Failed {
			continue
		}
		r := &req{at: g.Req}
		arrivals = append(arrivals, r)
		byID[id{g.Proc, g.G, g.Req}] = r
	}
	slices.SortFunc(arrivals, func(a, b *req) int { return cmp.Compare(a.at, b.at) })
	n, next := 0, 0
	for _, g := range served {
		for next < len(arrivals) && arrivals[next].served {
			next++
		}
		r := byID[id{g.Proc, g.G, g.Req}]
		if count(g) && next < len(arrivals) && arrivals[next] != r && arrivals[next].at < r.at {
			n++
		}
		r.served = true
	}
	return n
}

// commandMix lists the commands Redis executed, per grant, most frequent
// first, e.g. "evalsha 2.0, publish 1.0".
func commandMix(stats commandStats, grants float64) string {
	perGrant := map[string]float64{}
	for name, calls := range stats {
		if !harnessCommands[name] && calls > 0 {
			perGrant[name] = float64(calls) / grants
		}
	}
	return topMix(perGrant)
}

// childProc is one worker process of the hot-key workload.
type childProc struct {
	cmd    *exec.Cmd
	stdin  *os.File
	out    *bufio.Reader
	stderr *strings.Builder
	cancel context.CancelFunc
	once   sync.Once
}

func startChild(exe string, spec childSpec, limit time.Duration) (*childProc, error) {
	raw, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	// The context kills a child that outlives its whole run.
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), childEnv+"="+string(raw))
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		cancel()
		return nil, err
	}
	cmd.Stdin = stdinR
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		return nil, err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, fmt.Errorf("start child: %w", err)
	}
	stdinR.Close()
	return &childProc{cmd: cmd, stdin: stdinW, out: bufio.NewReader(stdout), stderr: &stderr, cancel: cancel}, nil
}

// readLine reads one line from the child within the child's time limit (the
// context kills it, which closes its stdout).
func (c *childProc) readLine() (string, error) {
	line, err := c.out.ReadString('\n')
	if err != nil {
		c.stop()
		return "", fmt.Errorf("child %v: %w; stderr: %s", c.cmd.Args, err, strings.TrimSpace(c.stderr.String()))
	}
	return line, nil
}

func (c *childProc) waitReady() error {
	line, err := c.readLine()
	if err != nil {
		return err
	}
	if strings.TrimSpace(line) != "ready" {
		return fmt.Errorf("child said %q instead of ready", line)
	}
	return nil
}

func (c *childProc) begin(start, end time.Time) error {
	_, err := fmt.Fprintf(c.stdin, "%d %d\n", start.UnixNano(), end.UnixNano())
	return err
}

func (c *childProc) report() (childReport, error) {
	var rep childReport
	line, err := c.readLine()
	if err != nil {
		return rep, err
	}
	if err := json.Unmarshal([]byte(line), &rep); err != nil {
		return rep, fmt.Errorf("child report: %w", err)
	}
	return rep, nil
}

// stop closes the child's stdin and waits for it to exit (bounded by its
// context).
func (c *childProc) stop() {
	c.once.Do(func() {
		c.stdin.Close()
		c.cmd.Wait()
		c.cancel()
	})
}
