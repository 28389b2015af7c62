// Package queuetest waits on a callqueue.Coalescer's load, for the tests
// of the packages that queue calls in one (the runtime, the go-redis
// backend). The coalescer's own tests keep their copy: they cannot import
// a package that imports theirs.
package queuetest

import (
	"testing"
	"time"

	"github.com/lockgen/lockgen/internal/callqueue"
)

// WaitFlights waits until n round trips are under way in co (bounded).
func WaitFlights(t testing.TB, co *callqueue.Coalescer, n int) {
	t.Helper()
	waitLoad(t, "round trips under way", n, func() int { f, _ := co.Load(); return f })
}

// WaitQueued waits until n calls are queued in co (bounded).
func WaitQueued(t testing.TB, co *callqueue.Coalescer, n int) {
	t.Helper()
	waitLoad(t, "calls queued", n, func() int { _, q := co.Load(); return q })
}

func waitLoad(t testing.TB, what string, n int, load func() int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for got := load(); got != n; got = load() {
		if time.Now().After(deadline) {
			t.Fatalf("%d %s, want %d", got, what, n)
		}
		time.Sleep(time.Millisecond)
	}
}
