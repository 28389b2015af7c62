package faults

import (
	"context"
	"fmt"
	"net"
	"os"
	goruntime "runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/lockgen/lockgen/lua"
	"github.com/lockgen/lockgen/runtime"
	"github.com/redis/go-redis/v9"
)

// Clean-ups do not pile up during an outage. Many waiters wait for locks
// another client holds; the server is killed, stays down a while, and
// comes back (empty). Every waiter keeps trying through the outage, and
// each failed attempt whose outcome is unknown leaves its holder id to the
// clean-up. The goroutines of the process must stay within a constant of
// what they were before the outage (before: a goroutine per failed
// attempt, living a lease), and the clean-up must be over soon after the
// server is back.
//
// LOCKGEN_OUTAGE_WAITERS and LOCKGEN_OUTAGE_SECONDS size it (default 50
// waiters, 8 s); docs/reliability.md has the figures for 1,000 and 10 s.
// The case does not run in parallel with others: it counts the goroutines
// of the whole process.
func TestCleanUpsBoundedDuringOutage(t *testing.T) {
	waiters := envInt("LOCKGEN_OUTAGE_WAITERS", 50)
	outage := time.Duration(envInt("LOCKGEN_OUTAGE_SECONDS", 8)) * time.Second
	const lease = 30 * time.Second
	e := newEnv(t)
	holder := e.locker(e.client(e.srv.Addr, nil), "oh")
	locks := make([]runtime.Lock, waiters)
	for i := range locks {
		locks[i] = runtime.Lock{Kind: runtime.Mutex, Key: fmt.Sprint("outage-", i), Lease: lease}
	}
	if h := acquire(ctxFor(t, 30*time.Second), holder, locks...); h.err != nil {
		t.Fatal(h.err)
	}
	calls := &callCount{}
	rdb := e.client(e.srv.Addr, func(o *redis.Options) { o.PoolSize = 50 })
	rdb.AddHook(calls)
	w := e.locker(rdb, "ow")
	results := make(chan outcome, waiters)
	ctx := ctxFor(t, 5*time.Minute)
	for _, lk := range locks {
		go func() { results <- acquire(ctx, w, lk) }()
	}
	waitEvents(t, w, runtime.EventBusy, waiters, 60*time.Second)
	base := goruntime.NumGoroutine()

	e.srv.Kill()
	killed := time.Now()
	peak := base
	for time.Since(killed) < outage {
		peak = max(peak, goruntime.NumGoroutine())
		time.Sleep(50 * time.Millisecond)
	}
	during := calls.snapshot()
	if os.Getenv("DBG") != "" {
		kinds := map[runtime.EventKind]int{}
		w.ev.mu.Lock()
		var last error
		for _, e := range w.ev.events {
			kinds[e.Kind]++
			if e.Err != nil {
				last = e.Err
			}
		}
		w.ev.mu.Unlock()
		t.Logf("end of outage: goroutines %d, events %v, last err %v", goruntime.NumGoroutine(), kinds, last)
	}
	if err := e.srv.Restart(); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	for range waiters {
		o := await(t, results, 2*lease, "a waiter")
		if os.Getenv("DBG") != "" {
			t.Logf("waiter returned %v after restart: %v", o.returned.Sub(restarted), o.err)
		}
		if o.err != nil {
			t.Fatalf("a waiter after the restart: %v", o.err)
		}
		o.held.Release()
	}
	settled, after := settle(base+20, 20*time.Second), calls.snapshot()
	t.Logf("%d waiters, outage %v: goroutines %d before, peak %d during, %d once settled %v after the restart; calls during the outage %v, after it %v",
		waiters, outage, base, peak, settled.n, settled.at.Sub(restarted).Round(time.Millisecond), during, after.minus(during))
	if bound := base + 50; peak > bound {
		t.Errorf("goroutines went from %d to %d during the outage; want at most %d (not a goroutine per failed attempt)", base, peak, bound)
	}
	if settled.n > base+20 {
		t.Errorf("goroutines %d, 20 s after the restart; want at most %d", settled.n, base+20)
	}
}

type goroutineCount struct {
	n  int
	at time.Time
}

// settle waits until the process has at most want goroutines, or d
// passes, and returns the count then.
func settle(want int, d time.Duration) goroutineCount {
	end := time.Now().Add(d)
	for {
		n := goruntime.NumGoroutine()
		if n <= want || time.Now().After(end) {
			return goroutineCount{n, time.Now()}
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitEvents waits until l has reported n events of kind, for as many
// holders.
func waitEvents(t *testing.T, l *subject, kind runtime.EventKind, n int, d time.Duration) {
	t.Helper()
	end := time.Now().Add(d)
	for {
		l.ev.mu.Lock()
		seen := map[string]bool{}
		for _, e := range l.ev.events {
			if e.Kind == kind {
				seen[e.Holder] = true
			}
		}
		added := l.ev.added
		l.ev.mu.Unlock()
		if len(seen) >= n {
			return
		}
		select {
		case <-added:
		case <-time.After(time.Until(end)):
			t.Fatalf("%d holders reported %v within %v, want %d", len(seen), kind, d, n)
		}
	}
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// callCount is a go-redis hook that counts the scripts called (and other
// commands), by script name, sent or not.
type callCount struct {
	mu sync.Mutex
	n  map[string]int
}

type counts map[string]int

func (c counts) minus(o counts) counts {
	out := counts{}
	for k, v := range c {
		if d := v - o[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

func (c *callCount) snapshot() counts {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := counts{}
	for k, v := range c.n {
		out[k] = v
	}
	return out
}

func (c *callCount) add(cmds ...redis.Cmder) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	for _, cmd := range cmds {
		name := cmd.Name()
		if args := cmd.Args(); (name == "evalsha" || name == "eval") && len(args) > 1 {
			name = scriptName(fmt.Sprint(args[1]))
		}
		c.n[name]++
	}
}

func scriptName(shaOrSource string) string {
	for _, s := range lua.All() {
		if s.SHA1 == shaOrSource || s.Source == shaOrSource {
			return s.Name
		}
	}
	return "script"
}

func (c *callCount) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) { return next(ctx, network, addr) }
}

func (c *callCount) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.add(cmd)
		return next(ctx, cmd)
	}
}

func (c *callCount) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.add(cmds...)
		return next(ctx, cmds)
	}
}
