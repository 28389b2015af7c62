package embedded_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lockgen/lockgen/embedded"
	"github.com/lockgen/lockgen/runtime"
)

func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// The scenarios every backend shares (every kind, goroutines and Lockers
// on one Backend excluding each other, wake-ups, Close) are the
// conformance suite's: conformance_test.go.

// The embedded server has no replicas, so replica safety always fails, and
// gives the lock back.
func TestReplicasNeverAcknowledge(t *testing.T) {
	b := embedded.NewBackend(nil)
	l := runtime.NewWithBackend(b, runtime.WithReplicas(1, 10*time.Millisecond))
	defer l.Close()
	_, err := l.Acquire(context.Background(), runtime.Lock{Kind: runtime.Mutex, Key: "k"})
	if !errors.Is(err, runtime.ErrNotReplicated) {
		t.Fatalf("Acquire with WithReplicas(1): %v, want ErrNotReplicated", err)
	}
	for _, k := range keys(b) {
		if strings.HasPrefix(k, "lockgen:mutex:{k}") && !tombstone(b, k) {
			t.Fatalf("lock %s left held after ErrNotReplicated", k)
		}
	}
}

// tombstone reports whether key only remembers a fence (its holder is "!").
func tombstone(b *embedded.Backend, key string) bool {
	for _, k := range b.Server().Snapshot() {
		if k.Key == key {
			return strings.HasPrefix(k.String, "! ")
		}
	}
	return true
}

func keys(b *embedded.Backend) []string {
	var out []string
	for _, k := range b.Server().Snapshot() {
		out = append(out, k.Key)
	}
	return out
}
