package harness

import (
	"math"
	"strings"
	"testing"
	"time"
)

// idleResult is a workload-8 result whose holders alone executed aloneRate
// commands/s and used aloneCPU ms/s, and whose waiters added perWaiter
// commands/s and cpuPerWaiter ms/s each, over 30-second windows.
func idleResult(row string, procs, waiters int, aloneRate, perWaiter, aloneCPU, cpuPerWaiter float64) IdleWaitersResult {
	const secs = 30
	return IdleWaitersResult{
		Row: row, Procs: procs, Waiters: waiters,
		Alone: idleWindow{Seconds: secs, Executed: int64(aloneRate * secs), CPU: aloneCPU * secs / 1000},
		With: idleWindow{Seconds: secs, Executed: int64((aloneRate + perWaiter*float64(waiters)) * secs),
			CPU: (aloneCPU + cpuPerWaiter*float64(waiters)) * secs / 1000},
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// A waiter's share is what the waiters added to the holders' own rate,
// divided among them; the windows may differ in length.
func TestIdlePerWaiter(t *testing.T) {
	r := IdleWaitersResult{
		Waiters: 100,
		Alone:   idleWindow{Seconds: 30, Executed: 600, CPU: 0.03}, // 20/s, 1 ms/s
		With:    idleWindow{Seconds: 40, Executed: 40 * 3620, CPU: 0.04 + 40*0.033},
	}
	if got := r.ExecutedPerWaiter(); !near(got, 36) {
		t.Errorf("executed per waiter %v, want (3620-20)/100 = 36", got)
	}
	if got := r.CPUPerWaiter(); !near(got, 0.33) {
		t.Errorf("CPU per waiter %v ms/s, want (1+33-1)/100 = 0.33", got)
	}
	// Noise around zero stays negative rather than clamped.
	r.With = idleWindow{Seconds: 30, Executed: 570}
	if got := r.ExecutedPerWaiter(); !near(got, -0.01) {
		t.Errorf("executed per waiter %v, want -0.01", got)
	}
	for _, bad := range []IdleWaitersResult{{Waiters: 0, Alone: r.Alone, With: r.With}, {Waiters: 10, Alone: r.Alone}} {
		if got := bad.ExecutedPerWaiter(); !math.IsNaN(got) {
			t.Errorf("%+v: executed per waiter %v, want NaN (nothing to divide)", bad, got)
		}
	}
}

// between counts the library's commands only, each name's calls since the
// first snapshot, and the CPU and time in between.
func TestBetweenSnapshots(t *testing.T) {
	t0 := time.Unix(1000, 0)
	s := serverSnapshot{at: t0, cpu: 1.5, stats: commandStats{"evalsha": 10, "get": 10, "info": 4}}
	e := serverSnapshot{at: t0.Add(30 * time.Second), cpu: 1.8, stats: commandStats{"evalsha": 70, "get": 40, "info": 9, "pexpire": 5}}
	w, diff := between(s, e)
	if w.Seconds != 30 || w.Executed != 95 || !near(w.CPU, 0.3) {
		t.Errorf("window %+v, want 30 s, 95 executed (info left out), 0.3 s CPU", w)
	}
	if diff["evalsha"] != 60 || diff["get"] != 30 || diff["pexpire"] != 5 {
		t.Errorf("per command %v", diff)
	}
	if !near(w.ExecutedPerSec(), 95.0/30) || !near(w.CPUMillisPerSec(), 10) {
		t.Errorf("rates %v/s, %v ms/s", w.ExecutedPerSec(), w.CPUMillisPerSec())
	}
}

// The mix is each command's rate beyond the holders', per waiter, largest
// first, commands the waiters did not add left out.
func TestIdleMix(t *testing.T) {
	with := commandStats{"evalsha": 60*10 + 30, "pexpire": 30 * 10, "get": 600 + 30, "info": 50, "pttl": 30}
	alone := commandStats{"evalsha": 30, "get": 30, "pttl": 30}
	got := idleMix(with, 30, alone, 30, 10)
	if want := "evalsha 2.00, get 2.00, pexpire 1.00"; got != want {
		t.Errorf("mix %q, want %q", got, want)
	}
}

// Every lockgen row has a target per shape, its median over the
// repetitions that measured it; other libraries have none; a void
// measurement (a waiter got a held lock) is left out, and a row measured by
// none reads n/a.
func TestIdleTargets(t *testing.T) {
	opts := Options{IdleWaiters: 100, IdleProcs: []int{1, 10}, IdleRows: idleRows(), IdleReps: 3}
	void := idleResult("lockgen/fair", 10, 100, 5, 0.01, 1, 0)
	void.Acquired, void.Err = 1, "1 waiters got a lock their holder still held"
	reps := []Rep{
		{Idle: []IdleWaitersResult{
			idleResult("lockgen/mutex", 1, 100, 20, 36, 1, 0.33), idleResult("lockgen/mutex", 10, 100, 20, 30, 1, 0.3),
			idleResult("lockgen/fair", 1, 100, 20, 0.1, 1, 0.001), void,
			idleResult("redsync/default", 1, 100, 20, 7, 1, 0.1),
		}},
		{Idle: []IdleWaitersResult{
			idleResult("lockgen/mutex", 1, 100, 20, 34, 1, 0.3), idleResult("lockgen/mutex", 10, 100, 20, 31, 1, 0.3),
			idleResult("lockgen/fair", 1, 100, 20, 0.3, 1, 0.001), idleResult("lockgen/fair", 10, 100, 20, 0.15, 1, 0.001),
		}},
		{Idle: []IdleWaitersResult{
			idleResult("lockgen/mutex", 1, 100, 20, 35, 1, 0.3), idleResult("lockgen/mutex", 10, 100, 20, 32, 1, 0.3),
			idleResult("lockgen/fair", 1, 100, 20, 0.12, 1, 0.001), idleResult("lockgen/fair", 10, 100, 20, 0.25, 1, 0.001),
		}},
	}
	ts := idleTargets(&Results{Opts: opts, Reps: reps})
	if want := 6 * 2; len(ts) != want {
		t.Fatalf("%d targets, want %d (six lockgen rows × two shapes)", len(ts), want)
	}
	what := func(procs int) string {
		return "idle waiters, " + idleShape(100, procs) + ": executed commands/s per waiting caller ((with waiters − holders alone) ÷ 100)"
	}
	cases := []struct {
		row    string
		procs  int
		median float64
		n      int
		result string
	}{
		{"lockgen/mutex", 1, 35, 3, "FAIL"},
		{"lockgen/mutex", 10, 31, 3, "FAIL"},
		{"lockgen/fair", 1, 0.12, 3, "pass"},
		{"lockgen/fair", 10, 0.2, 2, "pass"}, // the void repetition left out: (0.15+0.25)/2
		{"lockgen/read, behind a writer", 1, math.NaN(), 0, "n/a"},
	}
	for _, c := range cases {
		got, ok := findTarget(ts, c.row, what(c.procs))
		if !ok {
			t.Errorf("no target %s | %s", c.row, what(c.procs))
			continue
		}
		if got.Result() != c.result || got.Measured.N != c.n || !(near(got.Measured.Median, c.median) || math.IsNaN(c.median) && math.IsNaN(got.Measured.Median)) {
			t.Errorf("%s at %d processes: %+v %s, want median %v over %d, %s", c.row, c.procs, got.Measured, got.Result(), c.median, c.n, c.result)
		}
	}
	for _, tg := range ts {
		if !strings.HasPrefix(tg.Peer, "lockgen/") || tg.Limit != "≤ 0.2/s" {
			t.Errorf("target %s | %s | %s", tg.Peer, tg.What, tg.Limit)
		}
	}
}

func TestIdleShapeAndRowSelection(t *testing.T) {
	if got := idleShape(100, 1); got != "100 waiters in 1 process" {
		t.Errorf("idleShape(100, 1) = %q", got)
	}
	if got := idleShape(100, 10); got != "10 processes × 10 waiters" {
		t.Errorf("idleShape(100, 10) = %q", got)
	}
	rows := SelectIdleRows(idleRows(), "lockgen/write, redsync/default")
	var names []string
	for _, r := range rows {
		names = append(names, r.Name)
	}
	if got, want := strings.Join(names, "; "), "lockgen/write, behind a reader; lockgen/write, behind a writer; redsync/default"; got != want {
		t.Errorf("selected %q, want %q", got, want)
	}
}

// Workloads 6 and 8 run their own number of repetitions; -reps sets all;
// the loop runs as many as the most any workload wants.
func TestRepsPerWorkload(t *testing.T) {
	o := Full()
	if o.repsOf("hotkey") != 3 || o.repsOf("manykeys") != 5 || o.repsOf("idlewaiters") != idleReps || o.totalReps() != 5 {
		t.Errorf("Full: hotkey %d, manykeys %d, idlewaiters %d, total %d", o.repsOf("hotkey"), o.repsOf("manykeys"), o.repsOf("idlewaiters"), o.totalReps())
	}
	o.SetReps(1)
	if o.totalReps() != 1 || o.repsOf("manykeys") != 1 || o.repsOf("idlewaiters") != 1 {
		t.Errorf("SetReps(1): total %d", o.totalReps())
	}
	o = Options{Reps: 4}
	if o.repsOf("manykeys") != 4 || o.totalReps() != 4 {
		t.Errorf("unset workload reps should follow Reps: %d, %d", o.repsOf("manykeys"), o.totalReps())
	}
	if got := repsText(Full()); got != "3 for workloads 1 to 5 and 7, 5 for workload 6, 2 for workload 8" {
		t.Errorf("repsText(Full()) = %q", got)
	}
	o = Full()
	if err := o.KeepWorkloads("idlewaiters"); err != nil {
		t.Fatal(err)
	}
	if len(o.IdleRows) == 0 || len(o.ManyGoroutines) != 0 || o.MemoryLocks != 0 || repsText(o) != "2 for workload 8" {
		t.Errorf("idlewaiters alone: %d rows, many keys %v, memory %d, %q", len(o.IdleRows), o.ManyGoroutines, o.MemoryLocks, repsText(o))
	}
}

// Windows start half a renewal period after a round, never before the
// earliest moment asked, and short windows start at once.
func TestQuietStart(t *testing.T) {
	t0 := time.Unix(1000, 0)
	c := renewalClock{from: t0, period: 10 * time.Second}
	cases := []struct {
		earliest time.Duration // after t0
		window   time.Duration
		want     time.Duration // after t0
	}{
		{0, 30 * time.Second, 5 * time.Second},
		{5 * time.Second, 30 * time.Second, 5 * time.Second},
		{5*time.Second + 1, 30 * time.Second, 15 * time.Second},
		{33 * time.Second, 10 * time.Second, 35 * time.Second},
		{33 * time.Second, 300 * time.Millisecond, 33 * time.Second},
	}
	for _, tc := range cases {
		if got := c.quietStart(t0.Add(tc.earliest), tc.window).Sub(t0); got != tc.want {
			t.Errorf("quietStart(t0+%v, window %v) = t0+%v, want t0+%v", tc.earliest, tc.window, got, tc.want)
		}
	}
}

// Waiters start with a renewal round, so that whatever they do every
// lease/3 is half a period from the windows' edges too.
func TestRoundStart(t *testing.T) {
	t0 := time.Unix(1000, 0)
	c := renewalClock{from: t0, period: 10 * time.Second}
	for _, tc := range []struct{ earliest, window, want time.Duration }{
		{-time.Second, 30 * time.Second, 0},
		{time.Second, 30 * time.Second, 10 * time.Second},
		{20 * time.Second, 30 * time.Second, 20 * time.Second},
		{21 * time.Second, 300 * time.Millisecond, 21 * time.Second},
	} {
		if got := c.round(t0.Add(tc.earliest), tc.window).Sub(t0); got != tc.want {
			t.Errorf("round(t0+%v, window %v) = t0+%v, want t0+%v", tc.earliest, tc.window, got, tc.want)
		}
	}
}
