package main

import (
	"testing"
	"time"
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
