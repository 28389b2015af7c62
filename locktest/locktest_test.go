package locktest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockgen/lockgen/embedded"
	"github.com/lockgen/lockgen/locktest"
	"github.com/lockgen/lockgen/runtime"
)

func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func newLocker(t *testing.T, opts ...runtime.Option) *locktest.Locker {
	l := locktest.New(opts...)
	t.Cleanup(func() { l.Close() })
	return l
}

func acquire(t *testing.T, l *locktest.Locker, lock runtime.Lock) (*runtime.Held, int64) {
	t.Helper()
	h, err := l.Acquire(ctxTimeout(t, 10*time.Second), lock)
	if err != nil {
		t.Fatalf("Acquire %v: %v", lock.Key, err)
	}
	f, _ := runtime.Fence(h.Context())
	return h, f
}

// lostNow fails unless h's context is already cancelled with ErrLockLost.
func lostNow(t *testing.T, h *runtime.Held, after string) {
	t.Helper()
	select {
	case <-h.Context().Done():
		if cause := context.Cause(h.Context()); !errors.Is(cause, runtime.ErrLockLost) {
			t.Fatalf("after %s: cause %v, want ErrLockLost", after, cause)
		}
	default:
		t.Fatalf("%s returned and the holder's context is not cancelled", after)
	}
}

// Expire ends a lock of every kind at once, for a holder with a 30 s lease
// (lease/3 would be 10 s); the next holder gets a higher fence.
func TestExpireEveryKind(t *testing.T) {
	l := newLocker(t)
	for _, lock := range []runtime.Lock{
		{Kind: runtime.Mutex, Key: "m"},
		{Kind: runtime.Fair, Key: "f"},
		{Kind: runtime.Read, Key: "r"},
		{Kind: runtime.Write, Key: "w"},
		{Kind: runtime.Semaphore, Key: "s", Permits: 2},
	} {
		t.Run(lock.Kind.String(), func(t *testing.T) {
			h, f1 := acquire(t, l, lock)
			if err := l.Expire(lock); err != nil {
				t.Fatal(err)
			}
			lostNow(t, h, "Expire")
			_ = h.Release() // lost: what it returns is the runtime's business
			h2, f2 := acquire(t, l, lock)
			defer h2.Release()
			if f2 <= f1 {
				t.Fatalf("fence after Expire %d, not above the lost holder's %d", f2, f1)
			}
		})
	}
}

// Steal hands the lock to another holder: the holder in l is told at once,
// the thief's fence is higher, l's callers find the lock busy until the
// thief lets go.
func TestSteal(t *testing.T) {
	l := newLocker(t, runtime.WithKeyPrefix("app:"))
	lock := runtime.Lock{Kind: runtime.Mutex, Key: "order:42", Lease: time.Minute}
	h, f1 := acquire(t, l, lock)
	thief, err := l.Steal(lock)
	if err != nil {
		t.Fatal(err)
	}
	lostNow(t, h, "Steal")
	f2, ok := runtime.Fence(thief.Context())
	if !ok || f2 <= f1 {
		t.Fatalf("thief's fence %d (%v), want above %d", f2, ok, f1)
	}
	try := lock
	try.Wait = runtime.NoWait
	if _, err := l.Acquire(ctxTimeout(t, 10*time.Second), try); !errors.Is(err, runtime.ErrNotAcquired) {
		t.Fatalf("Acquire while the thief holds it: %v, want ErrNotAcquired", err)
	}
	if err := thief.Release(); err != nil {
		t.Fatal(err)
	}
	h3, f3 := acquire(t, l, try)
	defer h3.Release()
	if f3 <= f2 {
		t.Fatalf("fence %d after the thief, want above %d", f3, f2)
	}
}

// Expire and Steal of a lock nobody holds say so.
func TestTakeUnheld(t *testing.T) {
	l := newLocker(t)
	lock := runtime.Lock{Kind: runtime.Mutex, Key: "nobody"}
	if err := l.Expire(lock); !errors.Is(err, runtime.ErrNotHeld) {
		t.Fatalf("Expire: %v, want ErrNotHeld", err)
	}
	if _, err := l.Steal(lock); !errors.Is(err, runtime.ErrNotHeld) {
		t.Fatalf("Steal: %v, want ErrNotHeld", err)
	}
}

// Advance ends the leases that run out within it, and only those.
func TestAdvance(t *testing.T) {
	l := newLocker(t)
	short, _ := acquire(t, l, runtime.Lock{Kind: runtime.Mutex, Key: "short", Lease: 10 * time.Second})
	long, _ := acquire(t, l, runtime.Lock{Kind: runtime.Mutex, Key: "long", Lease: time.Hour})
	defer long.Release()
	l.Advance(5 * time.Second)
	if err := short.Context().Err(); err != nil {
		t.Fatalf("10 s lease ended after 5 s: %v", err)
	}
	// The renewal Advance sent restarted the lease: 11 s from here ends it.
	l.Advance(11 * time.Second)
	lostNow(t, short, "Advance past the lease")
	if err := long.Context().Err(); err != nil {
		t.Fatalf("1 h lease ended after 16 s: %v", err)
	}
}

// While stalled, a waiting Acquire gives up at the end of its wait; a lock
// expired meanwhile is reported when the stall ends, not before.
func TestStall(t *testing.T) {
	l := newLocker(t)
	lock := runtime.Lock{Kind: runtime.Mutex, Key: "job"}
	h, _ := acquire(t, l, lock)
	resume := l.Stall()
	wait := runtime.Lock{Kind: runtime.Mutex, Key: "other", Wait: 50 * time.Millisecond}
	if _, err := l.Acquire(ctxTimeout(t, 10*time.Second), wait); err == nil {
		t.Fatal("Acquire succeeded on a stalled backend")
	}
	if err := l.Expire(lock); err != nil {
		t.Fatal(err)
	}
	if err := h.Context().Err(); err != nil {
		t.Fatalf("holder told of the loss through a stalled backend: %v", err)
	}
	resume()
	lostNow(t, h, "resume")
	resume() // a second call does nothing
	h2, _ := acquire(t, l, wait)
	h2.Release()
}

// FailAcquires fails acquires with the given error until restored; a held
// lock keeps renewing meanwhile.
func TestFailAcquires(t *testing.T) {
	l := newLocker(t)
	held, _ := acquire(t, l, runtime.Lock{Kind: runtime.Mutex, Key: "held"})
	defer held.Release()
	down := errors.New("redis is down")
	restore := l.FailAcquires(down)
	lock := runtime.Lock{Kind: runtime.Fair, Key: "k", Wait: 100 * time.Millisecond}
	if _, err := l.Acquire(ctxTimeout(t, 10*time.Second), lock); !errors.Is(err, down) {
		t.Fatalf("Acquire: %v, want an error wrapping the injected one", err)
	}
	l.Advance(time.Second) // renews: renewals are not failed
	if err := held.Context().Err(); err != nil {
		t.Fatalf("held lock lost while only acquires fail: %v", err)
	}
	restore()
	h, _ := acquire(t, l, lock)
	h.Release()

	defer l.FailAcquires(nil)()
	if _, err := l.Acquire(ctxTimeout(t, 10*time.Second), lock); !errors.Is(err, locktest.ErrInjected) {
		t.Fatalf("Acquire: %v, want ErrInjected", err)
	}
}

// Expire wakes the lock's waiters in other processes: one waiting with a
// 20 s registration window (it would not try again by itself for 20 s)
// gets the lock at once, with a higher fence.
func TestExpireWakesWaiters(t *testing.T) {
	l := newLocker(t)
	busy := make(chan struct{}, 16)
	other := runtime.NewWithBackend(embedded.NewBackend(l.Server()), runtime.WithWaiterWindow(20*time.Second),
		runtime.WithObserver(func(e runtime.Event) {
			if e.Kind == runtime.EventBusy {
				busy <- struct{}{}
			}
		}))
	defer other.Close()
	lock := runtime.Lock{Kind: runtime.Mutex, Key: "q", Lease: time.Minute}
	h, f1 := acquire(t, l, lock)
	ctx := ctxTimeout(t, 10*time.Second)
	got := make(chan int64, 1)
	go func() {
		hw, err := other.Acquire(ctx, lock)
		if err != nil {
			t.Error(err)
			got <- 0
			return
		}
		f, _ := runtime.Fence(hw.Context())
		hw.Release()
		got <- f
	}()
	// Its first attempt, then (subscribed) its second: asleep after that.
	for range 2 {
		select {
		case <-busy:
		case <-ctx.Done():
			t.Fatal("the waiter never got busy")
		}
	}
	if err := l.Expire(lock); err != nil {
		t.Fatal(err)
	}
	lostNow(t, h, "Expire")
	select {
	case f2 := <-got:
		if f2 <= f1 {
			t.Fatalf("waiter's fence %d, want above %d", f2, f1)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("waiter not woken within 5 s of Expire (its window is 20 s)")
	}
}
