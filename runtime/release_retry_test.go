package runtime_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/embedded"
	"github.com/lockgen/lockgen/runtime"
)

// refusingReleases fails the first releases it sees with err, without
// running them, and counts every release call.
type refusingReleases struct {
	backend.Backend
	refuse   int32
	err      error
	releases atomic.Int32
}

func (b *refusingReleases) Eval(ctx context.Context, c backend.Call) (any, error) {
	if strings.HasSuffix(c.Script.Name, "_release") {
		if b.releases.Add(1) <= b.refuse {
			return nil, b.err
		}
	}
	return b.Backend.Eval(ctx, c)
}

// A release whose connection cannot be dialled was never sent: Release
// tries again (within the release timeout) and returns nil once it went
// through, instead of leaving the lock to the background clean-up.
func TestReleaseRetriesAFailedDial(t *testing.T) {
	dial := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	b := &refusingReleases{Backend: embedded.NewBackend(nil), refuse: 3, err: dial}
	l := runtime.NewWithBackend(b)
	defer l.Close()
	h, err := l.Acquire(context.Background(), runtime.Lock{Kind: runtime.Mutex, Key: "k"})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Release(); err != nil {
		t.Fatalf("Release after 3 refused dials: %v, want nil", err)
	}
	if n := b.releases.Load(); n != 4 {
		t.Errorf("%d release calls, want 4 (3 refused dials, then the one that ran)", n)
	}
}

// Any other failure may have reached Redis: Release reports it at once and
// leaves the rest to the clean-up, which runs the same script again.
func TestReleaseDoesNotRetryACallThatMayHaveRun(t *testing.T) {
	reset := &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
	b := &refusingReleases{Backend: embedded.NewBackend(nil), refuse: 1, err: reset}
	l := runtime.NewWithBackend(b)
	defer l.Close()
	h, err := l.Acquire(context.Background(), runtime.Lock{Kind: runtime.Mutex, Key: "k"})
	if err != nil {
		t.Fatal(err)
	}
	// Only the first release fails: had Release run it again, it would
	// have returned nil.
	if err := h.Release(); err == nil || !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("Release after a reset: %v, want the reset, reported", err)
	}
}
