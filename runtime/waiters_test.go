package runtime_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockgen/lockgen/runtime"
)

// Many goroutines of one process queue up on one lock again and again. The
// lease is 30s, so if any wake-up is lost the test runs into its 10s
// context: every waiter must be woken by a message. (A mutex wakes one
// waiter per process per release; the next sleeping waiter must still be
// known to the lock's next release, see wakeups.leave.)
func TestManyWaitersInOneProcessAllGetTheLock(t *testing.T) {
	cases := []struct {
		lock runtime.Lock
		most int32 // holders allowed at once
	}{
		{runtime.Lock{Kind: runtime.Mutex, Key: "crowd"}, 1},
		{runtime.Lock{Kind: runtime.Fair, Key: "crowd"}, 1},
		{runtime.Lock{Kind: runtime.Write, Key: "crowd"}, 1},
		{runtime.Lock{Kind: runtime.Semaphore, Key: "crowd1", Permits: 1}, 1},
		{runtime.Lock{Kind: runtime.Semaphore, Key: "crowd2", Permits: 2}, 2},
	}
	forEachTarget(t, func(t *testing.T, tg target) {
		for _, c := range cases {
			t.Run(c.lock.Kind.String(), func(t *testing.T) {
				l := tg.newLocker(t)
				ctx := ctxTimeout(t, 10*time.Second)
				var inside, most atomic.Int32
				var wg sync.WaitGroup
				errs := make(chan error, 8)
				for range 8 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for range 8 {
							h, err := l.Acquire(ctx, c.lock)
							if err != nil {
								errs <- err
								return
							}
							n := inside.Add(1)
							for {
								m := most.Load()
								if n <= m || most.CompareAndSwap(m, n) {
									break
								}
							}
							time.Sleep(200 * time.Microsecond)
							inside.Add(-1)
							if err := h.Release(); err != nil {
								errs <- err
								return
							}
						}
					}()
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					t.Fatalf("a waiter: %v", err)
				}
				if m := most.Load(); m > c.most {
					t.Fatalf("%d holders at once, want at most %d", m, c.most)
				}
			})
		}
	})
}
