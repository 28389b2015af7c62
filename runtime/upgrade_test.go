package runtime_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockgen/lockgen/runtime"
)

// A call chain that holds the read side of a key cannot take its write
// side: the writer would wait for its own read hold forever. Acquire says so
// at once with ErrInvalidLock, without a Redis call that could leave
// anything behind, and the read hold is unharmed. Asking for both sides in
// one call is fine: the write side is taken first.
func TestReadToWriteUpgradeIsInvalid(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		l := tg.newLocker(t)
		other := tg.newLocker(t)
		ctx := ctxTimeout(t, 10*time.Second)
		read := runtime.Lock{Kind: runtime.Read, Key: "doc"}
		write := runtime.Lock{Kind: runtime.Write, Key: "doc"}

		r, err := l.Acquire(ctx, read)
		if err != nil {
			t.Fatal(err)
		}
		nested, cancel := context.WithCancel(r.Context()) // a context derived from the hold counts too
		defer cancel()
		start := time.Now()
		for name, c := range map[string]context.Context{"held context": r.Context(), "derived context": nested} {
			_, err := l.Acquire(c, write) // Wait 0: would wait until ctx is done
			if !errors.Is(err, runtime.ErrInvalidLock) {
				t.Fatalf("upgrade with the %s: %v, want ErrInvalidLock", name, err)
			}
		}
		if took := time.Since(start); took > time.Second {
			t.Errorf("the refused upgrades took %v: they must not wait", took)
		}
		// Another chain can still share the read side: the read hold is
		// intact and no write intent was left behind.
		r2, err := other.Acquire(ctx, runtime.Lock{Kind: runtime.Read, Key: "doc", Wait: runtime.NoWait})
		if err != nil {
			t.Fatalf("second reader after the refused upgrade: %v", err)
		}
		for _, h := range []*runtime.Held{r2, r} {
			if err := h.Release(); err != nil {
				t.Fatal(err)
			}
		}

		// Both sides in one call: write first, then read as the writer.
		both, err := l.Acquire(ctx, read, write)
		if err != nil {
			t.Fatalf("read and write in one call: %v", err)
		}
		if _, err := other.Acquire(ctx, runtime.Lock{Kind: runtime.Read, Key: "doc", Wait: runtime.NoWait}); !errors.Is(err, runtime.ErrNotAcquired) {
			t.Fatalf("reader of another chain while written: %v, want ErrNotAcquired", err)
		}
		if err := both.Release(); err != nil {
			t.Fatal(err)
		}
	})
}
