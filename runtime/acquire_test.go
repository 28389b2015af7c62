package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lockgen/lockgen/runtime"
)

// All or nothing: if one key of a multi-key call is busy, the ones taken
// before it are given back.
func TestMultiKeyAllOrNothing(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		a, b := tg.newLocker(t), tg.newLocker(t)
		ctx := ctxTimeout(t, 5*time.Second)
		// "m:2" sorts after "m:1": the call takes m:1, then finds m:2 busy.
		busy, err := a.Acquire(ctx, runtime.Lock{Kind: runtime.Mutex, Key: "m:2"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = b.Acquire(ctx,
			runtime.Lock{Kind: runtime.Mutex, Key: "m:2", Wait: 50 * time.Millisecond},
			runtime.Lock{Kind: runtime.Mutex, Key: "m:1"})
		if !errors.Is(err, runtime.ErrNotAcquired) {
			t.Fatalf("multi-key with a busy key: %v, want ErrNotAcquired", err)
		}
		// Given back: at most its fence is left (a tombstone).
		if v, err := tg.do(t, "GET", "@mutex:{m:1}"); err != nil || (v != nil && !strings.HasPrefix(fmt.Sprint(v), "! ")) {
			t.Fatalf("m:1 left held after the failed call: GET = %v, %v", v, err)
		}
		busy.Release()
		h, err := b.Acquire(ctx, runtime.Lock{Kind: runtime.Mutex, Key: "m:2"}, runtime.Lock{Kind: runtime.Mutex, Key: "m:1"})
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"m:1", "m:2"} {
			if _, ok := runtime.FenceFor(h.Context(), runtime.Mutex, k); !ok {
				t.Errorf("no fence for %s", k)
			}
		}
		if err := h.Release(); err != nil {
			t.Fatal(err)
		}
	})
}

func TestWaitBounds(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		observe, busy := busySignal()
		a, b := tg.newLocker(t), tg.newLocker(t, runtime.WithObserver(observe))
		h, err := a.Acquire(context.Background(), runtime.Lock{Kind: runtime.Mutex, Key: "w", Lease: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer h.Release()

		start := time.Now()
		_, err = b.Acquire(context.Background(), runtime.Lock{Kind: runtime.Mutex, Key: "w", Wait: 100 * time.Millisecond})
		if !errors.Is(err, runtime.ErrNotAcquired) {
			t.Fatalf("Wait 100ms: %v, want ErrNotAcquired", err)
		}
		if took := time.Since(start); took < 100*time.Millisecond || took > time.Second {
			t.Errorf("Wait 100ms returned after %v", took)
		}

		// The shortest Wait of a call bounds the whole call.
		_, err = b.Acquire(context.Background(),
			runtime.Lock{Kind: runtime.Mutex, Key: "w"},
			runtime.Lock{Kind: runtime.Mutex, Key: "v", Wait: runtime.NoWait})
		if !errors.Is(err, runtime.ErrNotAcquired) {
			t.Fatalf("mixed waits: %v, want ErrNotAcquired at once", err)
		}

		// ctx done while waiting: a ctx error, not ErrNotAcquired.
		ctx, cancel := context.WithTimeout(context.Background(), 80*time.Millisecond)
		defer cancel()
		_, err = b.Acquire(ctx, runtime.Lock{Kind: runtime.Mutex, Key: "w"})
		if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, runtime.ErrNotAcquired) {
			t.Fatalf("ctx deadline: %v, want DeadlineExceeded and not ErrNotAcquired", err)
		}
		// Cancelled while waiting (after its busy reply), with a cause:
		// both are in the error.
		drain(busy)
		cctx, ccancel := context.WithCancelCause(context.Background())
		got := acquireAsync(cctx, b, runtime.Lock{Kind: runtime.Mutex, Key: "w"})
		waitBusy(t, busy, 1)
		shutdown := errors.New("shutting down")
		ccancel(shutdown)
		if a := <-got; !errors.Is(a.err, context.Canceled) || !errors.Is(a.err, shutdown) || errors.Is(a.err, runtime.ErrNotAcquired) {
			t.Fatalf("ctx cancel: %v, want Canceled with its cause, not ErrNotAcquired", a.err)
		}
	})
}

func TestInvalidLocks(t *testing.T) {
	l := embeddedTarget(t).newLocker(t)
	ctx := context.Background()
	cases := []struct {
		name  string
		locks []runtime.Lock
		want  error
	}{
		{"none", nil, runtime.ErrInvalidLock},
		{"kind", []runtime.Lock{{Kind: 99, Key: "k"}}, runtime.ErrInvalidLock},
		{"empty key", []runtime.Lock{{Kind: runtime.Mutex}}, runtime.ErrInvalidKey},
		{"brace", []runtime.Lock{{Kind: runtime.Mutex, Key: "a{b"}}, runtime.ErrInvalidKey},
		{"lease", []runtime.Lock{{Kind: runtime.Mutex, Key: "k", Lease: time.Microsecond}}, runtime.ErrInvalidLock},
		{"permits on mutex", []runtime.Lock{{Kind: runtime.Mutex, Key: "k", Permits: 2}}, runtime.ErrInvalidLock},
		{"semaphore without permits", []runtime.Lock{{Kind: runtime.Semaphore, Key: "k"}}, runtime.ErrInvalidLock},
	}
	for _, c := range cases {
		if _, err := l.Acquire(ctx, c.locks...); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	bad := embeddedTarget(t).newLocker(t, runtime.WithHolderIDs(func() string { return "no spaces" }))
	if _, err := bad.Acquire(ctx, runtime.Lock{Kind: runtime.Mutex, Key: "k"}); !errors.Is(err, runtime.ErrInvalidLock) {
		t.Errorf("bad holder id: %v, want ErrInvalidLock", err)
	}
}

func TestClosedLocker(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		l := tg.newLocker(t)
		h, err := l.Acquire(context.Background(), runtime.Lock{Kind: runtime.Mutex, Key: "c"})
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		if !errors.Is(context.Cause(h.Context()), runtime.ErrClosed) {
			t.Errorf("held context cause after Close: %v", context.Cause(h.Context()))
		}
		if err := h.Release(); err != nil {
			t.Errorf("release after Close: %v", err)
		}
		if _, err := l.Acquire(context.Background(), runtime.Lock{Kind: runtime.Mutex, Key: "c"}); !errors.Is(err, runtime.ErrClosed) {
			t.Errorf("acquire after Close: %v", err)
		}
	})
}

// A panicking method still gives its lock back through the deferred
// ReleaseInto, and the panic goes on.
func TestReleaseDuringPanic(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		l := tg.newLocker(t)
		method := func() (err error) {
			held, err := l.Acquire(context.Background(), runtime.Lock{Kind: runtime.Mutex, Key: "panic"})
			if err != nil {
				return err
			}
			defer held.ReleaseInto(&err)
			panic("boom")
		}
		func() {
			defer func() {
				if r := recover(); r != "boom" {
					t.Errorf("recovered %v, want the method's panic", r)
				}
			}()
			method()
		}()
		h, err := l.Acquire(context.Background(), runtime.Lock{Kind: runtime.Mutex, Key: "panic", Wait: runtime.NoWait})
		if err != nil {
			t.Fatalf("lock still held after the panicking method: %v", err)
		}
		h.Release()
	})
}
