package runtime_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockgen/lockgen/embedded"
	"github.com/lockgen/lockgen/runtime"
)

// A try-once acquire in a split vote (one server grants, one has the lock
// held by another, the third does not answer) returns busy at once: it
// used to wait for the silent server up to a tenth of the lease (a minute
// at a 10-minute lease).
func TestQuorumTryOnceSplitVote(t *testing.T) {
	busy := embedded.NewBackend(nil)
	backends := []runtime.Backend{busy, embedded.NewBackend(nil), hangingBackend{embedded.NewBackend(nil)}}
	if _, err := busy.Server().Do("SET", "lockgen:mutex:{t}", "other 7 0", "PX", "600000"); err != nil {
		t.Fatal(err)
	}
	l, err := runtime.NewQuorumWithBackends(backends)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	const lease = 10 * time.Minute
	err, took := acquireWithin(t, l, context.Background(), runtime.Lock{Kind: runtime.Mutex, Key: "t", Lease: lease, Wait: runtime.NoWait}, 2*time.Minute)
	if !errors.Is(err, runtime.ErrNotAcquired) {
		t.Fatalf("try-once in a split vote: %v, want ErrNotAcquired", err)
	}
	if took > 2*time.Second {
		t.Errorf("try-once in a split vote returned after %v, want at once (a tenth of the lease is %v)", took.Round(time.Millisecond), lease/10)
	}
	t.Logf("try-once in a split vote: busy after %v", took.Round(time.Millisecond))
}
