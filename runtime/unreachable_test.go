package runtime_test

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockgen/lockgen/backendtest"
	"github.com/lockgen/lockgen/redistest"
	"github.com/lockgen/lockgen/runtime"
)

// refusedLocker returns a Locker over a client of a closed port.
func refusedLocker(t *testing.T, opts ...runtime.Option) *runtime.Locker {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: redistest.ReserveAddr(t), DialTimeout: 300 * time.Millisecond})
	t.Cleanup(func() { c.Close() })
	// A short release timeout: Close waits that long for the clean-ups
	// that cannot reach the server.
	l := runtime.New(c, append([]runtime.Option{runtime.WithReleaseTimeout(300 * time.Millisecond)}, opts...)...)
	t.Cleanup(func() { l.Close() })
	return l
}

// defaultUnreachableTimeout is the documented default of
// WithUnreachableTimeout.
const defaultUnreachableTimeout = 15 * time.Second

// An Acquire that waits until ctx is done, with a context that never ends,
// over a server that refuses every connection, gives up within the default
// unreachable timeout with the refused dial, not at the end of ctx.
func TestUnreachableServerEndsAnUnboundedWait(t *testing.T) {
	t.Parallel()
	l := refusedLocker(t)
	err, took := backendtest.AcquireWithin(t, l, context.Background(), runtime.Lock{Kind: runtime.Mutex, Key: "x"}, defaultUnreachableTimeout+10*time.Second)
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("acquire over a closed port: %v, want the refused dial", err)
	}
	if errors.Is(err, runtime.ErrNotAcquired) {
		t.Errorf("acquire over a closed port: %v, must not say the lock was busy", err)
	}
	if took < defaultUnreachableTimeout-time.Second || took > defaultUnreachableTimeout+5*time.Second {
		t.Errorf("acquire failed after %v, want about the default unreachable timeout %v", took, defaultUnreachableTimeout)
	}
	t.Logf("closed port, default wait, no deadline: failed after %v: %v", took.Round(time.Millisecond), err)
}

// WithUnreachableTimeout sets the bound; a context that ends first still
// names the last failure, and a try-once Acquire returns it at once.
func TestUnreachableTimeoutOption(t *testing.T) {
	t.Parallel()
	const bound = 800 * time.Millisecond
	l := refusedLocker(t, runtime.WithUnreachableTimeout(bound))
	lock := runtime.Lock{Kind: runtime.Mutex, Key: "x"}

	err, took := backendtest.AcquireWithin(t, l, context.Background(), lock, bound+10*time.Second)
	if !errors.Is(err, syscall.ECONNREFUSED) || took < bound || took > bound+3*time.Second {
		t.Errorf("bound %v: failed after %v with %v, want the refused dial after the bound", bound, took, err)
	}
	t.Logf("bound %v: failed after %v", bound, took.Round(time.Millisecond))

	long := refusedLocker(t) // the default bound, longer than ctx
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err, _ = backendtest.AcquireWithin(t, long, ctx, lock, 10*time.Second)
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("ctx ended while the server refused: %v, want ctx's error and the refused dial", err)
	}

	lock.Wait = runtime.NoWait
	err, took = backendtest.AcquireWithin(t, long, context.Background(), lock, 10*time.Second)
	if !errors.Is(err, syscall.ECONNREFUSED) || took > 2*time.Second {
		t.Errorf("try-once over a closed port: %v after %v, want the refused dial at once", err, took)
	}

	bad := runtime.New(redis.NewClient(&redis.Options{Addr: redistest.ReserveAddr(t)}), runtime.WithUnreachableTimeout(0))
	defer bad.Close()
	if _, err := bad.Acquire(context.Background(), lock); !errors.Is(err, runtime.ErrInvalidLock) {
		t.Errorf("WithUnreachableTimeout(0): %v, want ErrInvalidLock", err)
	}
}
