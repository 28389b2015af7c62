package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/lua"
	"github.com/lockgen/lockgen/runtime"
)

// failingClaims fails, once armed, every claim of a mutex offer that the
// watchdog sends (mutex_renew with its claim's ARGV[4]) before it reaches
// Redis, and records the next waiter each claim named.
type failingClaims struct {
	backend.Backend

	mu     sync.Mutex
	armed  bool
	named  []string      // ARGV[4] of each claim failed
	failed chan struct{} // signalled at each claim failed
}

func (f *failingClaims) EvalBatch(ctx context.Context, calls []backend.Call) []backend.Reply {
	f.mu.Lock()
	armed := f.armed
	f.mu.Unlock()
	replies := make([]backend.Reply, len(calls))
	pass := make([]backend.Call, 0, len(calls))
	at := make([]int, 0, len(calls))
	for i, c := range calls {
		if armed && c.Script == lua.MutexRenew && len(c.Args) == 4 {
			replies[i].Err = errors.New("injected: the claim failed on its way")
			f.mu.Lock()
			f.named = append(f.named, c.Args[3])
			f.mu.Unlock()
			select {
			case f.failed <- struct{}{}:
			default:
			}
			continue
		}
		pass, at = append(pass, c), append(at, i)
	}
	if len(pass) > 0 {
		for j, r := range f.Backend.EvalBatch(ctx, pass) {
			replies[at[j]] = r
		}
	}
	return replies
}

// awaitInLine waits until l has n mutex waiters queued in its process.
func awaitInLine(t *testing.T, l *runtime.Locker, n int) {
	t.Helper()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	end := time.After(5 * time.Second)
	for runtime.MutexWaitersInLine(l) < n {
		select {
		case <-tick.C:
		case <-end:
			t.Fatalf("%d mutex waiters in line after 5s, want %d", runtime.MutexWaitersInLine(l), n)
		}
	}
}

// Three goroutines of one process: a holder, the first waiter, and a
// second waiter queued behind it in the process. The release offers the
// lock to the first waiter (its own process's), which counts it held and
// returns; its claim, which was to register the second waiter in Redis,
// fails until the offer's lease runs out, and the first waiter loses the
// lock. The second waiter, which took itself for registered and sleeps
// for an offer, is woken by that loss and takes the lock once the offer
// has lapsed in Redis: well within 5s, where nothing else would wake it
// before the end of the 30s lease (no release, no message follows).
func TestFailedClaimWakesTheNextWaiter(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		lock := runtime.Lock{Kind: runtime.Mutex, Key: "claim-fails-next", Lease: 30 * time.Second}
		ctx := ctxTimeout(t, 60*time.Second)
		fc := &failingClaims{failed: make(chan struct{}, 1)}
		observe, busy := busySignal()
		var n atomic.Int32
		l := tg.newLockerVia(t, func(b backend.Backend) backend.Backend {
			fc.Backend = b
			return fc
		}, runtime.WithObserver(observe), runtime.WithHolderIDs(func() string { return fmt.Sprintf("claimfail:%d", n.Add(1)) }))
		first, err := l.Acquire(ctx, lock)
		if err != nil {
			t.Fatal(err)
		}
		near := acquireAsync(ctx, l, lock)
		waitBusy(t, busy, 2) // registered, and subscribed
		next := acquireAsync(ctx, l, lock)
		awaitInLine(t, l, 2)

		fc.mu.Lock()
		fc.armed = true
		fc.mu.Unlock()
		if err := first.Release(); err != nil {
			t.Fatal(err) // offers the lock to the first waiter
		}
		a := <-near
		if a.err != nil {
			t.Fatalf("the first waiter, offered the lock by its own process's release: %v", a.err)
		}
		defer a.h.Release()
		awaitClosedOrSignal(t, fc.failed, "the failed claim")

		var b acquired
		select {
		case b = <-next:
		case <-time.After(5 * time.Second):
			t.Fatalf("the second waiter got no lock within 5s of its process's offer to the first waiter, whose claim (naming %q) failed; the lease is 30s", fc.claimsNamed())
		}
		if b.err != nil {
			t.Fatalf("the second waiter: %v", b.err)
		}
		defer b.h.Release()
		select {
		case <-a.h.Context().Done():
		default:
			t.Fatal("the second waiter holds the lock while the first still counts it held")
		}
		if cause := context.Cause(a.h.Context()); !errors.Is(cause, runtime.ErrLockLost) {
			t.Errorf("the first waiter's hold ended with %v, want ErrLockLost", cause)
		}
		if got := fc.claimsNamed(); len(got) == 0 || got[0] != "claimfail:3" {
			t.Errorf("the failed claims named %q, want the second waiter, claimfail:3, first", got)
		}
	})
}

func (f *failingClaims) claimsNamed() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.named...)
}
