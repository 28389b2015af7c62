package runtime_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockgen/lockgen/runtime"
)

// RenewNow tells a holder whose lock was deleted behind its back before it
// returns (with a 30 s lease, the watchdog alone would take 10 s), keeps a
// lock that is still held, and fails with ErrClosed after Close.
func TestRenewNow(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		l := tg.newLocker(t)
		ctx := ctxTimeout(t, 10*time.Second)
		gone, err := l.Acquire(ctx, runtime.Lock{Kind: runtime.Mutex, Key: "gone"})
		if err != nil {
			t.Fatal(err)
		}
		kept, err := l.Acquire(ctx, runtime.Lock{Kind: runtime.Read, Key: "kept"})
		if err != nil {
			t.Fatal(err)
		}
		defer kept.Release()
		if err := l.RenewNow(ctx); err != nil {
			t.Fatalf("RenewNow with both held: %v", err)
		}
		if err := gone.Context().Err(); err != nil {
			t.Fatalf("held lock's context ended by RenewNow: %v", err)
		}
		if _, err := tg.do(t, "DEL", "@mutex:{gone}"); err != nil {
			t.Fatal(err)
		}
		if err := l.RenewNow(ctx); err != nil {
			t.Fatal(err)
		}
		select {
		case <-gone.Context().Done():
			if cause := context.Cause(gone.Context()); !errors.Is(cause, runtime.ErrLockLost) {
				t.Fatalf("cause %v, want ErrLockLost", cause)
			}
		default:
			t.Fatal("RenewNow returned and the holder of a deleted lock was not told")
		}
		if err := kept.Context().Err(); err != nil {
			t.Fatalf("the lock still held lost its context: %v", err)
		}
		l.Close()
		if err := l.RenewNow(ctx); !errors.Is(err, runtime.ErrClosed) {
			t.Fatalf("RenewNow after Close: %v, want ErrClosed", err)
		}
	})
}
