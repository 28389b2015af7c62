package quorum_test

import (
	"context"
	"testing"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/backendtest"
	"github.com/lockgen/lockgen/embedded"
	"github.com/lockgen/lockgen/lua"
	"github.com/lockgen/lockgen/quorum"
	"github.com/lockgen/lockgen/runtime"
)

// releaseGate holds mutex release calls back until wait returns (a loaded
// server, or one the test orders after others); the rest go at once.
type releaseGate struct {
	backend.Backend
	wait func(ctx context.Context)
}

func (g releaseGate) hold(ctx context.Context, calls ...backend.Call) {
	for _, c := range calls {
		if c.Script == lua.MutexRelease {
			g.wait(ctx)
			return
		}
	}
}

func (g releaseGate) Eval(ctx context.Context, c backend.Call) (any, error) {
	g.hold(ctx, c)
	return g.Backend.Eval(ctx, c)
}

func (g releaseGate) EvalBatch(ctx context.Context, calls []backend.Call) []backend.Reply {
	g.hold(ctx, calls...)
	return g.Backend.EvalBatch(ctx, calls)
}

// slowReleases answers release scripts d late.
func slowReleases(b backend.Backend, d time.Duration) backend.Backend {
	return releaseGate{b, func(ctx context.Context) {
		select {
		case <-time.After(d):
		case <-ctx.Done():
		}
	}}
}

// A holder with the lock on two servers of three releases it, though the
// third, where another process holds the key, answers "not held" first
// and one of the two answers late: the release waits for a majority to
// say released (or for one to be out of reach), not for any two answers.
// It failed with ErrNotHeld ("expired or taken over") when two answers
// of any kind settled it, as TestQuorumMutualExclusion sometimes did
// under load.
func TestQuorumReleaseWaitsForAMajorityOfReleases(t *testing.T) {
	a, b, c := embedded.NewBackend(nil), embedded.NewBackend(nil), embedded.NewBackend(nil)
	ctx := backendtest.Timeout(t, time.Minute)
	other := runtime.NewWithBackend(c)
	defer other.Close()
	if _, err := other.Acquire(ctx, mutexLock("k", time.Minute)); err != nil {
		t.Fatal(err)
	}
	l, err := quorum.NewWithBackends([]backend.Backend{slowReleases(a, 300*time.Millisecond), b, c})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	// A wait, not NoWait: a try-once acquire settles on the first majority
	// of answers, and under load c's "busy" and one grant can be that
	// majority (a split vote, busy at once, by design).
	held, err := l.Acquire(ctx, runtime.Lock{Kind: runtime.Mutex, Key: "k", Lease: 10 * time.Second, Wait: 5 * time.Second})
	if err != nil {
		t.Fatalf("acquire on 2 of 3: %v", err)
	}
	if err := held.Release(); err != nil {
		t.Fatalf("release of a lock held on 2 of 3, one answering late: %v", err)
	}
}
