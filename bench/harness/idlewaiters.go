package harness

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockgen/lockgen/bench/internal/serverprobe"
	"github.com/lockgen/lockgen/bench/peers"
)

// Workload 8, idle waiters: what a caller that waits on a held lock costs
// Redis while it waits. Opts.IdleWaiters holders (in this process, one
// client) hold as many keys with a lease of Opts.IdleLease, renewed as their
// library renews; then as many waiters, one per key, wait on them from
// worker processes, in every shape of Opts.IdleProcs. Nothing is ever
// granted: the measure is the steady cost of waiting, which a fleet pays
// for every caller queued behind a long critical section.
//
// The holders cost Redis something of their own (renewals every lease/3),
// so the same window is measured first with the holders alone, and a
// waiter's share is (with waiters − holders alone) ÷ waiters. Both windows
// have the same length, two leases by default: a multiple of lease/3, so
// that each holds the same number of renewal rounds, and of 2/3 lease, a
// fair waiter's heartbeat period, so that each holds three heartbeats per
// waiter whatever their phase (a window of one lease held one or two, and
// the verdict depended on where the window fell: 0.20 against 0.32 for
// fair before). Each starts half a period after a round (see quietStart),
// so that no round falls on an edge.

// IdleRow is one row of workload 8: waiters of peer Waiter behind holders of
// peer Holder on the same keys.
type IdleRow struct {
	Name   string // for the report: "lockgen/read, behind a writer"
	Holder string // peer name
	Waiter string // peer name
}

// idleRows are workload 8's rows: every lockgen kind behind the holder it
// waits for, and the other libraries at their defaults (rueidislock at its
// single-instance setting, as in workloads 4, 6 and 7).
func idleRows() []IdleRow {
	same := func(name string) IdleRow { return IdleRow{Name: name, Holder: name, Waiter: name} }
	return []IdleRow{
		same("lockgen/mutex"),
		same("lockgen/fair"),
		{Name: "lockgen/read, behind a writer", Holder: "lockgen/write", Waiter: "lockgen/read"},
		{Name: "lockgen/write, behind a reader", Holder: "lockgen/read", Waiter: "lockgen/write"},
		{Name: "lockgen/write, behind a writer", Holder: "lockgen/write", Waiter: "lockgen/write"},
		{Name: "lockgen/semaphore, permits exhausted", Holder: "lockgen/semaphore", Waiter: "lockgen/semaphore"},
		same("redsync/default"),
		same("redislock/default"),
		same("rueidislock/tuned"),
	}
}

// IdleWaitersResult is one row of workload 8 in one shape: Waiters waiters
// spread over Procs processes.
type IdleWaitersResult struct {
	Row     string
	Procs   int
	Waiters int
	// Alone is the holders' window without waiters, With the same length
	// of window with the waiters of this shape waiting.
	Alone, With idleWindow
	SentPerSec  float64 // commands the waiters' clients sent, per second, all together
	Mix         string  // commands executed per waiter and second beyond the holders', most first
	Acquired    int     // waiters that got the lock: must be 0
	Errors      int
	Err         string
}

// idleWindow is what Redis did during one measured window.
type idleWindow struct {
	Seconds  float64
	Executed int64   // INFO commandstats calls, scripts' inner commands included
	CPU      float64 // INFO cpu user + sys, seconds
}

// ExecutedPerSec is the commands Redis executed per second in the window.
func (w idleWindow) ExecutedPerSec() float64 { return ratio(float64(w.Executed), w.Seconds) }

// CPUMillisPerSec is the Redis CPU the window took, in ms per second.
func (w idleWindow) CPUMillisPerSec() float64 { return ratio(1000*w.CPU, w.Seconds) }

// ExecutedPerWaiter is a waiter's share of the commands executed per
// second: what the waiters added to the holders' own, divided among them.
func (r IdleWaitersResult) ExecutedPerWaiter() float64 {
	return perWaiter(r.With.ExecutedPerSec(), r.Alone.ExecutedPerSec(), r.Waiters)
}

// CPUPerWaiter is a waiter's share of the Redis CPU, ms per second.
func (r IdleWaitersResult) CPUPerWaiter() float64 {
	return perWaiter(r.With.CPUMillisPerSec(), r.Alone.CPUMillisPerSec(), r.Waiters)
}

// perWaiter is (with − alone) ÷ waiters, NaN when there is nothing to
// divide. A negative share (noise around zero) is kept: clamping it would
// bias the median upwards only for the rows that cost nothing.
func perWaiter(with, alone float64, waiters int) float64 {
	if waiters <= 0 {
		return math.NaN()
	}
	return ratio(with-alone, float64(waiters))
}

// serverSnapshot is the server's counters at one moment.
type serverSnapshot struct {
	at    time.Time
	stats commandStats
	cpu   float64
}

func takeSnapshot(ctx context.Context, rdb *redis.Client) (serverSnapshot, error) {
	cpu, err := serverprobe.CPU(ctx, rdb)
	if err != nil {
		return serverSnapshot{}, err
	}
	stats, err := readCommandStats(ctx, rdb)
	return serverSnapshot{at: time.Now(), stats: stats, cpu: cpu}, err
}

// between is the window from s to e, and what was executed in it per
// command name.
func between(s, e serverSnapshot) (idleWindow, commandStats) {
	diff := commandStats{}
	for name, calls := range e.stats {
		if d := calls - s.stats[name]; d != 0 {
			diff[name] = d
		}
	}
	return idleWindow{Seconds: e.at.Sub(s.at).Seconds(), Executed: diff.total(), CPU: e.cpu - s.cpu}, diff
}

// measureWindow snapshots the server at start and at end (sleeping until
// each) and returns what happened in between.
func measureWindow(ctx context.Context, rdb *redis.Client, start, end time.Time) (idleWindow, commandStats, error) {
	time.Sleep(time.Until(start))
	s, err := takeSnapshot(ctx, rdb)
	if err != nil {
		return idleWindow{}, nil, err
	}
	time.Sleep(time.Until(end))
	e, err := takeSnapshot(ctx, rdb)
	if err != nil {
		return idleWindow{}, nil, err
	}
	w, diff := between(s, e)
	return w, diff, nil
}

// renewalClock is when the holders renew: every period (lease/3, as
// lockgen's watchdog and the user code of redsync and redislock renew)
// from the moment they took their keys.
type renewalClock struct {
	from   time.Time
	period time.Duration
}

// quietStart is the first moment from earliest on that lies half a period
// after a renewal round, where a window should start: a window of a whole
// number of periods started there holds exactly that many rounds, and no
// round straddles its edges. A window shorter than a period (Quick) holds
// no round wherever it starts; it starts at earliest.
func (c renewalClock) quietStart(earliest time.Time, window time.Duration) time.Time {
	return c.next(earliest, c.period/2, window)
}

// round is the first renewal round from earliest on, where waiters should
// start waiting: whatever they do every lease/3 (a fair waiter's
// heartbeat) then falls with the holders' rounds, half a period from the
// windows' edges too. With a window shorter than a period it is earliest.
func (c renewalClock) round(earliest time.Time, window time.Duration) time.Time {
	return c.next(earliest, 0, window)
}

// next is the first moment from earliest on that lies offset after a
// round, or earliest when the window is shorter than a period.
func (c renewalClock) next(earliest time.Time, offset, window time.Duration) time.Time {
	if c.period <= 0 || window < c.period {
		return earliest
	}
	first := c.from.Add(offset)
	if !earliest.After(first) {
		return first
	}
	k := (earliest.Sub(first) + c.period - 1) / c.period
	return first.Add(k * c.period)
}

// idleKey is the key of holder and waiter i.
func idleKey(i int) string { return fmt.Sprintf("idle:%d", i) }

// runIdleRow measures one row in every shape: the holders take their keys,
// the holders-alone window is measured once, then each shape's waiters
// wait through a window of the same length.
func runIdleRow(ctx context.Context, addr string, rdb *redis.Client, o Options, row IdleRow, logf func(string, ...any)) []IdleWaitersResult {
	out := make([]IdleWaitersResult, len(o.IdleProcs))
	for i, procs := range o.IdleProcs {
		out[i] = IdleWaitersResult{Row: row.Name, Procs: procs, Waiters: o.IdleWaiters}
	}
	failAll := func(err error) []IdleWaitersResult {
		for i := range out {
			if out[i].Err == "" {
				out[i].Err = err.Error()
			}
		}
		return out
	}
	held, release, err := holdIdleKeys(ctx, addr, rdb, o, row)
	if err != nil {
		return failAll(err)
	}
	renewals := renewalClock{from: time.Now(), period: o.IdleLease / 3}
	start := renewals.quietStart(time.Now(), o.IdleWindow)
	alone, aloneMix, err := measureWindow(ctx, rdb, start, start.Add(o.IdleWindow))
	if err != nil {
		release()
		return failAll(err)
	}
	for i := range out {
		out[i].Alone = alone
		runIdleShape(ctx, addr, rdb, o, row, renewals, aloneMix, &out[i])
		logf("idle waiters %-38s %2d×%-3d executed/s alone %.1f with %.1f per waiter %.3f, Redis CPU ms/s per waiter %.4f, acquired %d %s",
			row.Name, out[i].Procs, o.IdleWaiters/max(out[i].Procs, 1), alone.ExecutedPerSec(), out[i].With.ExecutedPerSec(),
			out[i].ExecutedPerWaiter(), out[i].CPUPerWaiter(), out[i].Acquired, out[i].Err)
	}
	if lost := release(); lost > 0 {
		failAll(fmt.Errorf("%d of %d holders had lost their lock at release (lease %v)", lost, len(held), o.IdleLease))
	}
	return out
}

// holdIdleKeys opens the holders' client and takes every key. release
// unlocks them, closes the client and returns how many were lost.
func holdIdleKeys(ctx context.Context, addr string, rdb *redis.Client, o Options, row IdleRow) ([]peers.Held, func() int, error) {
	p, ok := peers.ByName(row.Holder)
	if !ok {
		return nil, nil, fmt.Errorf("unknown holder peer %q", row.Holder)
	}
	if err := resetServer(ctx, rdb); err != nil {
		return nil, nil, err
	}
	c, err := p.Open(peers.Config{Addr: addr, Lease: o.IdleLease, ManualRenew: true})
	if err != nil {
		return nil, nil, err
	}
	// The holders' context lives until release: rueidislock ends a lock
	// when its context ends.
	holdCtx, cancel := context.WithCancel(ctx)
	held := make([]peers.Held, o.IdleWaiters)
	errs := make([]error, o.IdleWaiters)
	forEach(o.IdleWaiters, func(i int) { held[i], errs[i] = c.Lock(holdCtx, idleKey(i)) })
	release := func() int {
		lost := releaseAll(held)
		cancel()
		c.Close()
		return lost
	}
	if err := errors.Join(errs...); err != nil {
		release()
		return nil, nil, fmt.Errorf("holders: %w", err)
	}
	return held, release, nil
}

// runIdleShape starts res.Procs worker processes whose waiters wait on the
// held keys, lets them settle, and measures a window of Opts.IdleWindow.
func runIdleShape(ctx context.Context, addr string, rdb *redis.Client, o Options, row IdleRow, renewals renewalClock, aloneMix commandStats, res *IdleWaitersResult) {
	children, err := startIdleChildren(addr, o, row, res.Procs)
	defer stopChildren(children)
	if err != nil {
		res.Err = err.Error()
		return
	}
	waitAt := renewals.round(time.Now().Add(idleLineDelay), o.IdleWindow)
	start := renewals.quietStart(waitAt.Add(o.IdleSettle), o.IdleWindow)
	end := start.Add(o.IdleWindow)
	for _, ch := range children {
		if _, err := fmt.Fprintf(ch.stdin, "%d %d %d\n", waitAt.UnixNano(), start.UnixNano(), end.UnixNano()); err != nil {
			res.Err = err.Error()
			return
		}
	}
	with, diff, err := measureWindow(ctx, rdb, start, end)
	if err != nil {
		res.Err = err.Error()
		return
	}
	res.With = with
	var sent int64
	for _, ch := range children {
		rep, err := ch.report()
		if err != nil {
			res.Err = err.Error()
			return
		}
		sent += rep.Counts.Commands
		res.Acquired += rep.Acquired
		res.Errors += rep.Errors
		if res.Err == "" && rep.Error != "" {
			res.Err = rep.Error
		}
	}
	res.SentPerSec = ratio(float64(sent), with.Seconds)
	res.Mix = idleMix(diff, with.Seconds, aloneMix, res.Alone.Seconds, res.Waiters)
	if res.Acquired > 0 && res.Err == "" {
		res.Err = fmt.Sprintf("%d waiters got a lock their holder still held", res.Acquired)
	}
}

// idleMix lists, per waiter and second, what each command's rate was with
// the waiters beyond its rate with the holders alone, the largest first
// (at most four), e.g. "evalsha 6.00, pexpire 6.00".
func idleMix(with commandStats, withSecs float64, alone commandStats, aloneSecs float64, waiters int) string {
	rates := map[string]float64{}
	for name, calls := range with {
		if harnessCommands[name] {
			continue
		}
		v := perWaiter(ratio(float64(calls), withSecs), ratio(float64(alone[name]), aloneSecs), waiters)
		if v >= 0.005 {
			rates[name] = v
		}
	}
	return topMix(rates)
}

// idleLineDelay is the least time the children get to read the line that
// tells them when to start waiting.
const idleLineDelay = 200 * time.Millisecond

// startIdleChildren starts procs worker processes, the waiters split
// evenly over them, and waits until each is connected and warmed up.
func startIdleChildren(addr string, o Options, row IdleRow, procs int) ([]*childProc, error) {
	shape := hotKeyShape{Procs: procs, Goroutines: o.IdleWaiters}
	specs := make([]childSpec, procs)
	first := 0
	for i := range specs {
		n := shape.perProc(i)
		specs[i] = childSpec{Mode: idleChildMode, Addr: addr, Peer: row.Waiter, Proc: i, Goroutines: n, First: first, Lease: o.IdleLease}
		first += n
	}
	return startReadyChildren(specs, o.IdleSettle+2*o.IdleLease/3+o.IdleWindow+2*childReadyTimeout)
}

// runIdleWaiters is repetition r of workload 8: every row, each starting
// with the server reset, the rows in an order rotated by r.
func runIdleWaiters(ctx context.Context, addr string, rdb *redis.Client, o Options, r int, logf func(string, ...any)) []IdleWaitersResult {
	if len(o.IdleRows) == 0 || o.IdleWaiters <= 0 || len(o.IdleProcs) == 0 || r >= o.repsOf("idlewaiters") {
		return nil
	}
	k := r % len(o.IdleRows)
	order := append(slices.Clone(o.IdleRows[k:]), o.IdleRows[:k]...)
	repLog := func(format string, args ...any) { logf("rep %d: "+format, append([]any{r + 1}, args...)...) }
	var out []IdleWaitersResult
	for _, row := range order {
		out = append(out, runIdleRow(ctx, addr, rdb, o, row, repLog)...)
	}
	return out
}
