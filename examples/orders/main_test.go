package main

import (
	"sync"
	"testing"
	"time"

	"github.com/lockgen/lockgen/runtime"
)

// TestDemoChecksPass runs the whole demo on the embedded backend, with
// short holds, and fails if any of its checks (FIFO grants, increasing
// fences, shared reads, exclusive writes, at most two exports, one
// nightly job, a stale fenced write refused) fails.
func TestDemoChecksPass(t *testing.T) {
	if err := run("", 15*time.Millisecond); err != nil {
		t.Fatal(err)
	}
}

// TestDemoReportsEvents runs the demo with an observer, as -log does with
// slog: every grant is reported, and so is every release.
func TestDemoReportsEvents(t *testing.T) {
	var mu sync.Mutex
	counts := map[runtime.EventKind]int{}
	observe := func(e runtime.Event) {
		mu.Lock()
		counts[e.Kind]++
		mu.Unlock()
	}
	if err := run("", 15*time.Millisecond, runtime.WithObserver(observe)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if counts[runtime.EventAcquired] == 0 || counts[runtime.EventReleased] != counts[runtime.EventAcquired] {
		t.Errorf("events: %d acquired, %d released; want some, and as many released", counts[runtime.EventAcquired], counts[runtime.EventReleased])
	}
	if counts[runtime.EventSkipped] == 0 {
		t.Error("the nightly job's skipped instances were not reported")
	}
}
