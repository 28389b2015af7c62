package runtime_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/lockgen/lockgen/runtime"
)

// BenchmarkPing is the floor: one round trip to the same server.
func BenchmarkPing(b *testing.B) {
	rdb := redisClient(b)
	ctx := context.Background()
	for b.Loop() {
		if err := rdb.Ping(ctx).Err(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAcquireRelease: an uncontended acquire and release, one round
// trip each.
func BenchmarkAcquireRelease(b *testing.B) {
	l := runtime.New(redisClient(b), runtime.WithKeyPrefix(uniquePrefix(b)))
	defer l.Close()
	ctx := context.Background()
	for _, kind := range []runtime.Kind{runtime.Mutex, runtime.Fair, runtime.Read, runtime.Write, runtime.Semaphore} {
		b.Run(kind.String(), func(b *testing.B) {
			lock := runtime.Lock{Kind: kind, Key: "bench"}
			if kind == runtime.Semaphore {
				lock.Permits = 2
			}
			b.ReportAllocs()
			for b.Loop() {
				h, err := l.Acquire(ctx, lock)
				if err != nil {
					b.Fatal(err)
				}
				if err := h.Release(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkHandoff: time from a release to the acquire of the waiter it
// wakes (two Lockers, as two processes).
func BenchmarkHandoff(b *testing.B) {
	prefix := uniquePrefix(b)
	rdb := redisClient(b)
	a := runtime.New(rdb, runtime.WithKeyPrefix(prefix))
	w := runtime.New(rdb, runtime.WithKeyPrefix(prefix))
	defer a.Close()
	defer w.Close()
	ctx := context.Background()
	var total time.Duration
	i := 0
	for b.Loop() {
		lock := runtime.Lock{Kind: runtime.Mutex, Key: "handoff:" + strconv.Itoa(i), Lease: 10 * time.Second}
		i++
		h, err := a.Acquire(ctx, lock)
		if err != nil {
			b.Fatal(err)
		}
		got := make(chan time.Time, 1)
		queued := make(chan struct{})
		go func() {
			wctx, cancel := context.WithCancel(ctx)
			defer cancel()
			// Try once first so the waiter is subscribed before the release.
			if _, err := w.Acquire(wctx, runtime.Lock{Kind: runtime.Mutex, Key: lock.Key, Wait: runtime.NoWait}); err == nil {
				b.Error("lock not busy")
			}
			close(queued)
			h2, err := w.Acquire(wctx, lock)
			if err != nil {
				b.Error(err)
				got <- time.Time{}
				return
			}
			got <- time.Now()
			h2.Release()
		}()
		<-queued
		time.Sleep(time.Millisecond) // let the waiter subscribe and sleep
		released := time.Now()
		if err := h.Release(); err != nil {
			b.Fatal(err)
		}
		t := <-got
		total += t.Sub(released)
	}
	b.ReportMetric(float64(total.Microseconds())/float64(b.N), "µs/handoff")
}
