package runtime_test

import (
	"errors"
	"testing"
	"time"

	"github.com/lockgen/lockgen/redistest"
	"github.com/lockgen/lockgen/runtime"
	"github.com/redis/go-redis/v9"
)

// A release whose reply does not come returns after the release timeout,
// not after the client's own (much longer) timeouts: the Locker bounds it
// with a deadline it shares between releases (bound.go), which the client
// applies to the connection here (ContextTimeoutEnabled). The bound is
// never shorter than 7/8 of the timeout.
func TestReleaseEndsAtTheReleaseTimeout(t *testing.T) {
	const timeout = 400 * time.Millisecond
	proxy := redistest.StartProxy(t, redisServer(t).Addr)
	rdb := redis.NewClient(&redis.Options{
		Addr: proxy.Addr, ContextTimeoutEnabled: true, MaxRetries: -1,
		ReadTimeout: 60 * time.Second, WriteTimeout: 60 * time.Second,
	})
	t.Cleanup(func() { rdb.Close() })
	l := runtime.New(rdb, runtime.WithKeyPrefix(uniquePrefix(t)), runtime.WithReleaseTimeout(timeout))
	t.Cleanup(func() { l.Close() })
	lock := runtime.Lock{Kind: runtime.Mutex, Key: "release-timeout", Lease: 5 * time.Second}
	for round := range 2 { // the second release uses the deadline the first one made, or a new one
		h, err := l.Acquire(ctxTimeout(t, 10*time.Second), lock)
		if err != nil {
			t.Fatal(err)
		}
		proxy.SetMode(redistest.Blackhole())
		start := time.Now()
		err = h.Release()
		took := time.Since(start)
		proxy.SetMode(redistest.Forward())
		if err == nil || errors.Is(err, runtime.ErrNotHeld) {
			t.Fatalf("round %d: a release without a reply returned %v, want its error", round, err)
		}
		if took < timeout-timeout/8 || took > timeout+10*time.Second {
			t.Errorf("round %d: the release returned after %v, want about %v (at least %v)", round, took, timeout, timeout-timeout/8)
		}
		// The clean-up gives the lock back once Redis answers again.
		h2, err := l.Acquire(ctxTimeout(t, 10*time.Second), lock)
		if err != nil {
			t.Fatalf("round %d: the lock was not given back: %v", round, err)
		}
		if err := h2.Release(); err != nil {
			t.Fatal(err)
		}
	}
}
