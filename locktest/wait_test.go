package locktest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockgen/lockgen/embedded"
	"github.com/lockgen/lockgen/runtime"
)

// The code under test takes its lock on a goroutine of its own, when the
// test lets it; WaitHeld returns once it holds the lock, not before, and
// the test can then expire it under that code.
func TestWaitHeldThenExpire(t *testing.T) {
	l := newLocker(t)
	lock := runtime.Lock{Kind: runtime.Mutex, Key: "job:nightly", Lease: 30 * time.Second}
	start := make(chan struct{})
	result := make(chan error, 1)
	go func() { // the code under test: holds the lock until it is lost
		<-start
		h, err := l.Acquire(context.Background(), lock)
		if err != nil {
			result <- err
			return
		}
		defer h.Release()
		<-h.Context().Done()
		result <- context.Cause(h.Context())
	}()

	// Not held yet: WaitHeld must not return while the worker is held back.
	early, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if st, err := l.WaitHeld(early, lock); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitHeld before anyone took the lock: %+v, %v; want DeadlineExceeded", st, err)
	}

	close(start)
	st, err := l.WaitHeld(ctxTimeout(t, 10*time.Second), lock)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Holders) != 1 || st.Holders[0].Fence == 0 {
		t.Fatalf("WaitHeld returned %+v, want one holder with a fence", st)
	}
	if err := l.Expire(lock); err != nil {
		t.Fatalf("Expire right after WaitHeld: %v", err)
	}
	select {
	case err := <-result:
		if !errors.Is(err, runtime.ErrLockLost) {
			t.Fatalf("the worker ended with %v, want ErrLockLost", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the worker was not told of the loss within 10s")
	}
}

// A holder outside l (another Locker on the same server) is found too,
// though no grant of l wakes WaitHeld; every kind is named as Inspect names
// it.
func TestWaitHeldOtherLocker(t *testing.T) {
	l := newLocker(t)
	other := runtime.NewWithBackend(embedded.NewBackend(l.Server()))
	t.Cleanup(func() { other.Close() })
	for _, lock := range []runtime.Lock{
		{Kind: runtime.Fair, Key: "a"},
		{Kind: runtime.Read, Key: "b"},
		{Kind: runtime.Semaphore, Key: "c", Permits: 2},
	} {
		done := make(chan *runtime.Held, 1)
		go func() {
			time.Sleep(20 * time.Millisecond) // WaitHeld is already looking
			h, err := other.Acquire(context.Background(), lock)
			if err != nil {
				t.Error(err)
			}
			done <- h
		}()
		st, err := l.WaitHeld(ctxTimeout(t, 10*time.Second), lock)
		h := <-done
		if err != nil || len(st.Holders) == 0 {
			t.Fatalf("%s %s: WaitHeld %+v, %v; want the other Locker's holder", lock.Kind, lock.Key, st, err)
		}
		if h != nil {
			h.Release()
		}
	}
}

// A malformed lock is an error at once, not a wait until ctx is done.
func TestWaitHeldBadLock(t *testing.T) {
	l := newLocker(t)
	ctx := ctxTimeout(t, 10*time.Second)
	_, err := l.WaitHeld(ctx, runtime.Lock{Kind: runtime.Mutex, Key: ""})
	if err == nil || ctx.Err() != nil {
		t.Fatalf("WaitHeld with an empty key: %v (ctx %v); want an error before ctx ends", err, ctx.Err())
	}
	if !errors.Is(err, runtime.ErrInvalidKey) && !errors.Is(err, runtime.ErrInvalidLock) {
		t.Errorf("error %v, want ErrInvalidKey or ErrInvalidLock", err)
	}
}
