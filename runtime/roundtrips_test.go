package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
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

// ARGV[4] of a mutex attempt says whether a busy reply registers the
// caller: a waiter's does (any non-zero value), a try-once caller's (0)
// registers nothing. Waiters in two processes are both registered, so both
// releases offer the lock: each waiter sends one attempt after its
// subscription, the claim of its offer, and nothing while the other held
// the lock (its next attempt is not due for a lease).
//
// Which waiter is offered the lock first is not part of the guarantee:
// registrations under one holder queue by holder id. Nor is how a waiter
// claims its offer: with its next attempt, or, when the offer comes within
// half an offer of its first registration (as it usually does here), as
// its first renewal, after it returned.
func TestMutexWaitersAreRegistered(t *testing.T) {
	const window = 30 * time.Second
	prefix := uniquePrefix(t)
	holder := runtime.New(redisClient(t), runtime.WithKeyPrefix(prefix))
	t.Cleanup(func() { holder.Close() })
	observe, busy := busySignal()
	first, firstCalls := countedLocker(t, prefix, runtime.WithObserver(observe), runtime.WithWaiterWindow(window))
	observe2, busy2 := busySignal()
	second, secondCalls := countedLocker(t, prefix, runtime.WithObserver(observe2), runtime.WithWaiterWindow(window))
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
	// Whoever is handed the lock releases it, which hands it to the other.
	for range 2 {
		var a acquired
		name := "first waiter"
		select {
		case a = <-got:
		case a = <-got2:
			name = "second waiter"
		}
		if a.err != nil {
			t.Fatalf("%s: %v", name, a.err)
		}
		if err := a.h.Release(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	ms := strconv.FormatInt(window.Milliseconds(), 10)
	if got := firstCalls.argv4(); !waiterAttempts(got, ms) {
		t.Errorf("first waiter's ARGV[4] per attempt: %q, want %q twice or three times (first attempt, again after subscribing, and the claim if it was not a renewal)", got, ms)
	}
	if got := secondCalls.argv4(); len(got) == 0 || got[0] != "0" || !waiterAttempts(got[1:], ms) {
		t.Errorf("second Locker's ARGV[4] per attempt: %q, want \"0\" (try-once), then %q twice or three times (a waiter's first attempt, again after subscribing, and the claim if it was not a renewal)", got, ms)
	}
}

// waiterAttempts reports whether argv4 holds the attempts of one waiter
// that was offered the lock: 2 or 3, each with the registration window ms.
func waiterAttempts(argv4 []string, ms string) bool {
	return (len(argv4) == 2 || len(argv4) == 3) && !slices.ContainsFunc(argv4, func(v string) bool { return v != ms })
}
