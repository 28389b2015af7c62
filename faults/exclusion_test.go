package faults

import (
	"fmt"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/lockgen/lockgen/redistest"
)

// (h) Three processes increment a counter under one mutex, through a
// fenced store (counter_test.go), each through its own proxy, while the
// faults of the other cases are injected one after the other: a delay, a
// connection cut after a request, a holder and a waiter frozen by SIGSTOP
// past the lease, a holder blackholed past the lease, DEBUG SLEEP, CLIENT
// PAUSE WRITE, and a holder SIGKILLed and replaced. Throughout:
//
//   - no update is lost: the store's accepted writes equal the counter;
//   - no two grants share a fence, and a grant that is known to come after
//     another (it was asked for after the other was returned) has a higher
//     fence;
//   - a holder that still held its lock when it released it (Release nil)
//     was never refused by the store: nobody with a newer fence got in
//     while it held the lock.
//
// Refusals of holders that had lost their lock are fencing at work; they
// are counted and printed.
func TestMutualExclusionAndFencesUnderFaults(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := &counterRun{t: t, e: e, lease: time.Second, progress: make(chan struct{}, 1), faulted: map[string]string{}}
	for range 3 {
		r.start(redistest.StartProxy(t, e.srv.Addr))
	}
	p := r.procs

	const step = 10 // grants between two faults
	r.more(step, "warm-up")
	p[0].proxy.SetMode(redistest.Delay(30 * time.Millisecond))
	r.more(step, "30 ms delay")
	p[0].proxy.SetMode(redistest.Forward())

	for range 2 {
		awaitFired(t, p[1].proxy.CloseAfterNext("EVALSHA"))
		r.more(step, "connection cut after an EVALSHA")
	}
	for _, pr := range []counterProc{p[0], p[2]} {
		r.faulted[r.nextGrant(pr)] = "SIGSTOP"
		pr.c.signal(syscall.SIGSTOP)   // a holder, most likely in its work
		r.more(step, "holder stopped") // the others get the lock once its lease ran out
		pr.c.signal(syscall.SIGCONT)
	}
	r.nextGrant(p[1])
	p[0].c.signal(syscall.SIGSTOP) // a waiter, most likely
	r.more(step, "waiter stopped")
	p[0].c.signal(syscall.SIGCONT)
	for _, pr := range []counterProc{p[2], p[0]} {
		r.faulted[r.nextGrant(pr)] = "blackhole"
		pr.proxy.SetMode(redistest.Blackhole())
		r.more(step, "holder blackholed")
		pr.proxy.SetMode(redistest.Forward())
	}

	slept, err := e.srv.DebugSleep(300 * time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-slept; err != nil {
		t.Fatal(err)
	}
	r.more(step, "DEBUG SLEEP")
	if err := e.srv.PauseWrites(ctxFor(t, 5*time.Second), 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := e.srv.WaitWritable(ctxFor(t, 5*time.Second)); err != nil {
		t.Fatal(err)
	}
	r.more(step, "CLIENT PAUSE WRITE")

	r.faulted[r.nextGrant(p[1])] = "SIGKILL"
	p[1].c.signal(syscall.SIGKILL)
	p[1].c.waitExit(10 * time.Second)
	r.start(p[1].proxy)
	r.more(step, "holder killed and replaced")

	r.stop(p[1])
	checkExclusion(t, e, r.children())
	r.printFaulted()
}

// counterRun is the counter processes of one run of (h).
type counterRun struct {
	t        *testing.T
	e        *env
	lease    time.Duration
	procs    []counterProc
	progress chan struct{}     // poked at every line of every process
	faulted  map[string]string // holder id -> the fault that hit that hold
}

type counterProc struct {
	c     *child
	proxy *redistest.Proxy
}

// start starts a counter process through proxy.
func (r *counterRun) start(proxy *redistest.Proxy) {
	c := startChildNotify(r.t, r.e, "counter", proxy.Addr, r.progress, childLeaseEnv+"="+r.lease.String(), childHoldEnv+"=20ms")
	r.procs = append(r.procs, counterProc{c, proxy})
}

func (r *counterRun) grants() int {
	n := 0
	for _, pr := range r.procs {
		n += pr.c.count("grant")
	}
	return n
}

// more waits until the processes have made k more grants.
func (r *counterRun) more(k int, what string) {
	r.t.Helper()
	want := r.grants() + k
	deadline := time.After(30 * time.Second)
	for r.grants() < want {
		select {
		case <-r.progress:
		case <-deadline:
			r.t.Fatalf("(h) %s: %d grants in 30s, want %d", what, r.grants(), want)
		}
	}
}

// nextGrant waits for pr's next grant and returns its holder id.
func (r *counterRun) nextGrant(pr counterProc) string {
	r.t.Helper()
	return pr.c.awaitAfter(pr.c.mark(), 30*time.Second, "grant").fields[1]
}

// stop tells every process but the killed one to stop, and waits for them.
func (r *counterRun) stop(killed counterProc) {
	r.t.Helper()
	for _, pr := range r.procs {
		if pr.c != killed.c {
			pr.c.send("stop")
		}
	}
	for _, pr := range r.procs {
		if pr.c == killed.c {
			continue
		}
		if code := pr.c.waitExit(30 * time.Second); code != 0 {
			r.t.Errorf("counter child %s exited with %d; stderr: %s", pr.c.tag, code, pr.c.stderr.tail())
		}
	}
}

func (r *counterRun) children() []*child {
	var all []*child
	for _, pr := range r.procs {
		all = append(all, pr.c)
	}
	return all
}

// printFaulted says what became of the holds a fault fell on.
func (r *counterRun) printFaulted() {
	for _, c := range r.children() {
		for _, f := range c.all("done") {
			if what, ok := r.faulted[f[1]]; ok {
				r.t.Logf("(h) hold %s hit by %s: read %s, write %s, release %s", f[1], what, f[3], f[4], f[5])
			}
		}
	}
}

// checkExclusion reads the store and the children's reports.
func checkExclusion(t *testing.T, e *env, children []*child) {
	t.Helper()
	ctx := ctxFor(t, 10*time.Second)
	counter, _ := e.direct.Get(ctx, storeKeys[0]).Int64()
	accepted, _ := e.direct.Get(ctx, storeKeys[2]).Int64()
	dups, _ := e.direct.HGet(ctx, storeKeys[1], "dup").Int64()

	type grant struct {
		holder           string
		fence            int64
		called, returned time.Time
	}
	var grants []grant
	var failed, stale, keptButRefused int
	for _, c := range children {
		for _, f := range c.all("grant") {
			fence, _ := strconv.ParseInt(f[2], 10, 64)
			grants = append(grants, grant{f[1], fence, parseNS(f[3]), parseNS(f[4])})
		}
		failed += c.count("failed")
		for _, f := range c.all("done") { // done HOLDER FENCE READ WRITE RELEASE
			refused := f[3] == "stale" || f[3] == "dup" || f[4] == "stale" || f[4] == "dup"
			if refused {
				stale++
			}
			if refused && f[5] == "ok" {
				keptButRefused++
				t.Errorf("(h) holder %s (fence %s) was refused by the store (read %s, write %s) although it held the lock until its Release", f[1], f[2], f[3], f[4])
			}
		}
	}
	var disorder []string
	for _, a := range grants {
		for _, b := range grants {
			if a.holder == b.holder {
				continue
			}
			if a.fence == b.fence || a.returned.Before(b.called) && a.fence >= b.fence {
				disorder = append(disorder, fmt.Sprintf("%s fence %d (returned %s) then %s fence %d (asked %s)",
					a.holder, a.fence, a.returned.Format("15:04:05.000000"), b.holder, b.fence, b.called.Format("15:04:05.000000")))
			}
		}
	}
	t.Logf("(h) %d grants across %d processes, %d failed acquires, counter %d, accepted writes %d, lost updates %d, duplicate fences at the store %d, refusals of stale holders %d, refusals of holders that kept the lock %d, fence order violations %d",
		len(grants), len(children), failed, counter, accepted, accepted-counter, dups, stale, keptButRefused, len(disorder))
	if accepted != counter {
		t.Errorf("(h) %d lost updates: %d writes accepted, counter %d", accepted-counter, accepted, counter)
	}
	if dups != 0 {
		t.Errorf("(h) the store saw the same fence from two holders %d times", dups)
	}
	if len(disorder) > 0 {
		t.Errorf("(h) %d pairs of grants out of fence order, e.g. %s", len(disorder), disorder[0])
	}
	if len(grants) < 40 {
		t.Errorf("(h) only %d grants; the run did not exercise the lock", len(grants))
	}
}
