package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/lockgen/lockgen/lua"
	"github.com/lockgen/lockgen/runtime"
	"github.com/redis/go-redis/v9"
)

// scriptCalls is a go-redis hook that records the ARGV of every call of
// one script (EVALSHA, or EVAL after a NOSCRIPT), pipelines included.
type scriptCalls struct {
	script *lua.Script
	mu     sync.Mutex
	argv   [][]string
}

func (s *scriptCalls) DialHook(next redis.DialHook) redis.DialHook { return next }

func (s *scriptCalls) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		s.record(cmd)
		return next(ctx, cmd)
	}
}

func (s *scriptCalls) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			s.record(c)
		}
		return next(ctx, cmds)
	}
}

// record keeps cmd's ARGV if it runs s.script:
// EVALSHA sha numkeys key... arg...
func (s *scriptCalls) record(cmd redis.Cmder) {
	args := cmd.Args()
	if len(args) < 3 {
		return
	}
	name := fmt.Sprint(args[0])
	body := fmt.Sprint(args[1])
	if !(name == "evalsha" && body == s.script.SHA1) && !(name == "eval" && body == s.script.Source) {
		return
	}
	var numKeys int
	if _, err := fmt.Sscan(fmt.Sprint(args[2]), &numKeys); err != nil || 3+numKeys > len(args) {
		return
	}
	argv := make([]string, 0, len(args)-3-numKeys)
	for _, a := range args[3+numKeys:] {
		argv = append(argv, fmt.Sprint(a))
	}
	s.mu.Lock()
	s.argv = append(s.argv, argv)
	s.mu.Unlock()
}

func (s *scriptCalls) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.argv)
}

// argv4 returns, per call so far, its ARGV[4] ("" if none).
func (s *scriptCalls) argv4() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, len(s.argv))
	for i, a := range s.argv {
		if len(a) >= 4 {
			out[i] = a[3]
		}
	}
	return out
}

// countedLocker returns a Locker on its own client whose mutex_acquire
// calls are recorded.
func countedLocker(t *testing.T, prefix string, opts ...runtime.Option) (*runtime.Locker, *scriptCalls) {
	t.Helper()
	calls := &scriptCalls{script: lua.MutexAcquire}
	rdb := redisClient(t)
	rdb.AddHook(calls)
	l := runtime.New(rdb, append([]runtime.Option{runtime.WithKeyPrefix(prefix)}, opts...)...)
	t.Cleanup(func() { l.Close() })
	return l, calls
}

var _ redis.Hook = (*scriptCalls)(nil)

// A waiter that joins a wake channel its Locker already listens on (here,
// the lingering subscription of an earlier waiter) cannot miss a wake, so
// after its busy reply it sleeps: one acquire attempt before the release,
// not two.
func TestWaiterOnLiveSubscriptionSkipsImmediateRetry(t *testing.T) {
	prefix := uniquePrefix(t)
	holder := runtime.New(redisClient(t), runtime.WithKeyPrefix(prefix))
	t.Cleanup(func() { holder.Close() })
	observe, busy := busySignal()
	waiter, calls := countedLocker(t, prefix, runtime.WithObserver(observe))
	ctx := ctxTimeout(t, 10*time.Second)
	lock := runtime.Lock{Kind: runtime.Mutex, Key: "live", Lease: 30 * time.Second}

	round := func(wantBusy int) int {
		t.Helper()
		h, err := holder.Acquire(ctx, lock)
		if err != nil {
			t.Fatal(err)
		}
		before := calls.count()
		got := acquireAsync(ctx, waiter, lock)
		waitBusy(t, busy, wantBusy)
		time.Sleep(20 * time.Millisecond) // a second attempt, if any, is sent by now
		attempts := calls.count() - before
		if err := h.Release(); err != nil {
			t.Fatal(err)
		}
		a := <-got
		if a.err != nil {
			t.Fatalf("waiter: %v", a.err)
		}
		if err := a.h.Release(); err != nil {
			t.Fatal(err)
		}
		return attempts
	}
	// First waiter: it subscribes after its busy reply and tries again at
	// once, since a wake may have been published in between.
	if n := round(2); n != 2 {
		t.Fatalf("first waiter sent %d attempts before the release, want 2 (attempt, subscribe, attempt)", n)
	}
	// The channel lingers subscribed: the next waiter joins it first.
	if n := round(1); n != 1 {
		t.Fatalf("waiter on a live subscription sent %d attempts before the release, want 1", n)
	}
}

// Several goroutines of one process take turns on a hot mutex, each asking
// again as soon as it released. Each grant should cost the release and one
// attempt of the woken waiter: the releaser does not try while waiters of
// its process are queued, and nobody retries without reason.
func TestHotMutexInOneProcessAttemptsPerGrant(t *testing.T) {
	prefix := uniquePrefix(t)
	l, calls := countedLocker(t, prefix)
	ctx := ctxTimeout(t, 20*time.Second)
	lock := runtime.Lock{Kind: runtime.Mutex, Key: "hot", Lease: 30 * time.Second}
	const goroutines, rounds = 4, 50
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				h, err := l.Acquire(ctx, lock)
				if err != nil {
					errs <- err
					return
				}
				time.Sleep(500 * time.Microsecond)
				if err := h.Release(); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	grants := goroutines * rounds
	per := float64(calls.count()) / float64(grants)
	t.Logf("%d mutex_acquire calls for %d grants: %.2f per grant", calls.count(), grants, per)
	// The start-up (every goroutine's first busy reply, the first
	// subscription) costs a few; the steady state is one per grant.
	if per > 1.25 {
		t.Fatalf("%.2f acquire attempts per grant, want at most 1.25", per)
	}
}

// A mutex with several waiters in one process: they are granted in the
// order they arrived, and the holder, asking again right after its release,
// queues behind them instead of taking the lock back.
func TestMutexWaitersOfOneProcessGrantedInArrivalOrder(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		l := tg.newLocker(t)
		ctx := ctxTimeout(t, 10*time.Second)
		// A long lease: a waiter that is not woken by a message would show
		// as a timeout, not as a late grant.
		lock := runtime.Lock{Kind: runtime.Mutex, Key: "queue", Lease: 30 * time.Second}
		h, err := l.Acquire(ctx, lock)
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var order []string
		var wg sync.WaitGroup
		take := func(name string) {
			defer wg.Done()
			h, err := l.Acquire(ctx, lock)
			if err != nil {
				t.Errorf("%s: %v", name, err)
				return
			}
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
			time.Sleep(time.Millisecond)
			if err := h.Release(); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
		for _, name := range []string{"w1", "w2", "w3"} {
			wg.Add(1)
			go take(name)
			time.Sleep(30 * time.Millisecond) // each is asleep before the next arrives
		}
		if err := h.Release(); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		take("holder again")
		wg.Wait()
		want := []string{"w1", "w2", "w3", "holder again"}
		if !slices.Equal(order, want) {
			t.Fatalf("grant order %q, want %q", order, want)
		}
	})
}

// ARGV[4] of a mutex attempt is the registration window: a waiter's busy
// reply registers it for a hand-over for that long, a try-once caller's
// (window 0) registers nothing. Waiters in two processes are both
// registered, so the second release hands the lock over too: neither
// waiter sends an attempt after it was handed the lock, and the second one
// sends none after the first's grant either.
func TestMutexWaitersAreRegisteredForTheWindow(t *testing.T) {
	prefix := uniquePrefix(t)
	holder := runtime.New(redisClient(t), runtime.WithKeyPrefix(prefix))
	t.Cleanup(func() { holder.Close() })
	observe, busy := busySignal()
	first, firstCalls := countedLocker(t, prefix, runtime.WithObserver(observe), runtime.WithWaiterWindow(3*time.Second))
	observe2, busy2 := busySignal()
	second, secondCalls := countedLocker(t, prefix, runtime.WithObserver(observe2), runtime.WithWaiterWindow(3*time.Second))
	ctx := ctxTimeout(t, 10*time.Second)
	lock := runtime.Lock{Kind: runtime.Mutex, Key: "argv4", Lease: 30 * time.Second}

	h, err := holder.Acquire(ctx, lock)
	if err != nil {
		t.Fatal(err)
	}
	once := lock
	once.Wait = runtime.NoWait
	if _, err := second.Acquire(ctx, once); !errors.Is(err, runtime.ErrNotAcquired) {
		t.Fatalf("try-once: %v, want ErrNotAcquired", err)
	}
	got := acquireAsync(ctx, first, lock)
	waitBusy(t, busy, 2)
	got2 := acquireAsync(ctx, second, lock)
	waitBusy(t, busy2, 3) // the try-once caller's busy reply, then the waiter's two
	if err := h.Release(); err != nil {
		t.Fatal(err)
	}
	a := <-got
	if a.err != nil {
		t.Fatalf("first waiter: %v", a.err)
	}
	if err := a.h.Release(); err != nil {
		t.Fatal(err)
	}
	b := <-got2
	if b.err != nil {
		t.Fatalf("second waiter: %v", b.err)
	}
	if err := b.h.Release(); err != nil {
		t.Fatal(err)
	}
	if got, want := firstCalls.argv4(), []string{"3000", "3000"}; !slices.Equal(got, want) {
		t.Errorf("first waiter's ARGV[4] per attempt: %q, want %q (first attempt, again after subscribing, then handed the lock)", got, want)
	}
	if got, want := secondCalls.argv4(), []string{"0", "3000", "3000"}; !slices.Equal(got, want) {
		t.Errorf("second Locker's ARGV[4] per attempt: %q, want %q (try-once, then a waiter's first attempt and again after subscribing, then handed the lock)", got, want)
	}
}
