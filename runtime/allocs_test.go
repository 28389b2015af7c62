package runtime_test

import (
	"context"
	"testing"
	"time"

	"github.com/lockgen/lockgen/runtime"
)

// maxCycleAllocs bounds what one uncontended cycle (Acquire then Release of
// one lock that nobody else wants) allocates, go-redis included, on a
// real redis-server with a default client. Measured at 20 (mutex) to 23
// (semaphore), one more with a cancellable caller context, 24-27 with a
// deadline (issue 14: 70 at first; then 23-24, and 27-28 with a deadline;
// then a lone lock's KEYS in its Held and no errors.As on a release's nil
// error): go-redis itself takes about 12 of them, two commands, their
// replies and its pool's health checks. The ceiling leaves two of
// headroom (for the stray allocations of other tests' goroutines when the
// whole package runs, and a go-redis upgrade), and fails a change that
// brings back a per-call cost of any size.
const maxCycleAllocs = 29

// TestUncontendedCycleAllocations pins the allocations of the common
// production case, many different keys each locked without contention.
// testing.AllocsPerRun counts the whole process, so the mean over many
// cycles is what is compared: a stray allocation of another goroutine (the
// watchdog, the connection pool) moves it by a fraction.
func TestUncontendedCycleAllocations(t *testing.T) {
	l := runtime.New(redisClient(t), runtime.WithKeyPrefix(uniquePrefix(t)))
	t.Cleanup(func() { l.Close() })
	cancellable, cancel := context.WithCancel(context.Background())
	defer cancel()
	// A deadline sooner than a default client's own bound on a call (about
	// a minute with its retries) makes each acquire run its call on a
	// goroutine of its own, to return on time (call.go): the common case of
	// a request's context, and dearer.
	deadline, cancelDeadline := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancelDeadline()
	for _, kind := range []runtime.Kind{runtime.Mutex, runtime.Fair, runtime.Read, runtime.Write, runtime.Semaphore} {
		for _, c := range []struct {
			name string
			ctx  context.Context
		}{{"background", context.Background()}, {"cancellable", cancellable}, {"deadline", deadline}} {
			t.Run(kind.String()+"/"+c.name, func(t *testing.T) {
				lock := runtime.Lock{Kind: kind, Key: "allocs:" + c.name}
				if kind == runtime.Semaphore {
					lock.Permits = 2
				}
				var failed error
				allocs := testing.AllocsPerRun(300, func() {
					h, err := l.Acquire(c.ctx, lock)
					if err != nil {
						failed = err
						return
					}
					if err := h.Release(); err != nil {
						failed = err
					}
				})
				if failed != nil {
					t.Fatal(failed)
				}
				t.Logf("%.1f allocations per cycle", allocs)
				if allocs > maxCycleAllocs {
					t.Errorf("an uncontended %s cycle allocates %.1f objects, more than %d", kind, allocs, maxCycleAllocs)
				}
			})
		}
	}
}
