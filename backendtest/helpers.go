package backendtest

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockgen/lockgen/runtime"
)

// The helpers below are for tests of Lockers over any backend: the suite's
// scenarios use them, and so do the tests of packages built on the
// runtime (the quorum's), which would otherwise each keep a copy.

// Timeout returns a context that ends after d, cancelled when the test
// ends: it bounds a test's waits.
func Timeout(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

var keyPrefixSeq atomic.Int64

// KeyPrefix returns a key prefix (for runtime.WithKeyPrefix) no other call
// in any process returns: tests on a shared server never meet each
// other's keys.
func KeyPrefix(t testing.TB) string {
	return fmt.Sprintf("bt%d-%d-%d:", os.Getpid(), time.Now().UnixNano()%1e6, keyPrefixSeq.Add(1))
}

// BusySignal returns an Option whose observer signals each busy reply on
// the returned channel, without ever blocking the acquire that saw it.
func BusySignal() (runtime.Option, <-chan struct{}) {
	busy := make(chan struct{}, 64)
	return runtime.WithObserver(func(ev runtime.Event) {
		if ev.Kind == runtime.EventBusy {
			select {
			case busy <- struct{}{}:
			default:
			}
		}
	}), busy
}

// WaitBusy waits for n busy replies signalled by BusySignal, and fails the
// test if they do not come within 15 s each. A waiter's second busy reply
// comes after it has subscribed to its wake channel; it then sleeps until
// a message or its lease-based retry wakes it.
func WaitBusy(t testing.TB, busy <-chan struct{}, n int) {
	t.Helper()
	for range n {
		select {
		case <-busy:
		case <-time.After(15 * time.Second):
			t.Fatal("the waiter had no busy reply within 15s")
		}
	}
}

// Acquired is the outcome of an Acquire run by AcquireAsync.
type Acquired struct {
	Held *runtime.Held
	Err  error
}

// AcquireAsync runs l.Acquire(ctx, lock) in a goroutine and sends its
// outcome on the returned channel.
func AcquireAsync(ctx context.Context, l *runtime.Locker, lock runtime.Lock) <-chan Acquired {
	got := make(chan Acquired, 1)
	go func() {
		h, err := l.Acquire(ctx, lock)
		got <- Acquired{h, err}
	}()
	return got
}

// AcquireWithin runs l.Acquire(ctx, lock), releases what it got, and
// returns its error and how long it took; the test fails at once if it
// has not returned within limit (the Acquire goes on until the Locker is
// closed).
func AcquireWithin(t testing.TB, l *runtime.Locker, ctx context.Context, lock runtime.Lock, limit time.Duration) (error, time.Duration) {
	t.Helper()
	start := time.Now()
	done := make(chan error, 1)
	go func() {
		h, err := l.Acquire(ctx, lock)
		if err == nil {
			h.Release()
		}
		done <- err
	}()
	select {
	case err := <-done:
		return err, time.Since(start)
	case <-time.After(limit):
		t.Fatalf("acquire of %v still waiting after %v", lock, limit)
		return nil, 0
	}
}
