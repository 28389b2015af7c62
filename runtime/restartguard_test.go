package runtime_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockgen/lockgen/redistest"
	"github.com/lockgen/lockgen/runtime"
)

// A server without persistence forgets every lock when it restarts, while
// their holders run on until their leases end. Trials: a holder takes a
// lock (renew=false, lease L), the server is killed and restarted empty,
// and another Locker tries the same lock every 10 ms. Without the guard it
// gets the lock while the old holder still thinks it holds it (an early
// grant); with WithRestartGuard(L) never before the old lease ended, and
// still within about L of the restart.
func TestRestartGuardRefusesEarlyGrants(t *testing.T) {
	t.Parallel()
	const lease, trials = 3 * time.Second, 3
	srv := redistest.Start(t)
	prefix := uniquePrefix(t)
	old := runtime.New(srv.Client(t), runtime.WithKeyPrefix(prefix))
	defer old.Close()
	plain := runtime.New(srv.Client(t), runtime.WithKeyPrefix(prefix))
	defer plain.Close()
	guarded := runtime.New(srv.Client(t), runtime.WithKeyPrefix(prefix), runtime.WithRestartGuard(lease))
	defer guarded.Close()
	ctx := ctxTimeout(t, 60*time.Second)

	// A server that has just started is fresh too: the guarded Locker
	// waits for it (its Wait covers the rest of the guard).
	h, err := guarded.Acquire(ctx, runtime.Lock{Kind: runtime.Mutex, Key: "warm", Wait: lease + 5*time.Second})
	if err != nil {
		t.Fatalf("guarded acquire on a new server: %v", err)
	}
	h.Release()

	early := map[bool]int{}
	for _, withGuard := range []bool{false, true} {
		l := plain
		if withGuard {
			l = guarded
		}
		for i := 0; i < trials; i++ {
			lock := runtime.Lock{Kind: runtime.Mutex, Key: "k", Lease: lease, NoRenew: true, Wait: runtime.NoWait}
			held, err := old.Acquire(ctx, lock)
			if err != nil {
				t.Fatalf("old holder: %v", err)
			}
			oldEnd, _ := held.Context().Deadline()
			srv.Kill()
			restarted := time.Now()
			if err := srv.Restart(); err != nil {
				t.Fatal(err)
			}
			got, at := firstGrant(ctx, t, l, lock, restarted.Add(lease+5*time.Second))
			if at.Before(oldEnd) {
				early[withGuard]++
			}
			t.Logf("guard %v, trial %d: granted %v after the restart (the old holder's lease ended %v after it)",
				withGuard, i, at.Sub(restarted).Round(time.Millisecond), oldEnd.Sub(restarted).Round(time.Millisecond))
			got.Release()
			held.Release()
		}
	}
	t.Logf("early grants after a restart: %d of %d without the guard, %d of %d with it", early[false], trials, early[true], trials)
	if early[true] != 0 {
		t.Errorf("with the guard, %d of %d grants came while the old holder's lease ran", early[true], trials)
	}
	if early[false] == 0 {
		t.Errorf("without the guard no grant came early: the trial does not show what the guard prevents")
	}
}

// firstGrant tries lock every 10 ms until it gets it (failing the test at
// until), and returns the hold and when the grant's reply came.
func firstGrant(ctx context.Context, t *testing.T, l *runtime.Locker, lock runtime.Lock, until time.Time) (*runtime.Held, time.Time) {
	t.Helper()
	for {
		h, err := l.Acquire(ctx, lock)
		if err == nil {
			return h, time.Now()
		}
		if !errors.Is(err, runtime.ErrNotAcquired) && time.Now().After(until) {
			t.Fatalf("no grant by %v: %v", time.Until(until), err)
		}
		if time.Now().After(until) {
			t.Fatalf("no grant within the guard's lease and 5s after the restart: %v", err)
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// Bad uses of the option are errors of every Acquire.
func TestRestartGuardOptionErrors(t *testing.T) {
	for _, tg := range targets(t) {
		l := tg.newLocker(t, runtime.WithRestartGuard(0))
		if _, err := l.Acquire(context.Background(), runtime.Lock{Kind: runtime.Mutex, Key: "x"}); !errors.Is(err, runtime.ErrInvalidLock) {
			t.Errorf("%s: WithRestartGuard(0): %v, want ErrInvalidLock", tg.name, err)
		}
	}
	l := targets(t)[0].newLocker(t, runtime.WithRestartGuard(time.Second))
	if _, err := l.Acquire(context.Background(), runtime.Lock{Kind: runtime.Mutex, Key: "x"}); !errors.Is(err, runtime.ErrInvalidLock) {
		t.Errorf("embedded backend with WithRestartGuard: %v, want ErrInvalidLock", err)
	}
}

// On Cluster every master is asked: a guarded Locker grants nothing before
// the cluster's nodes have been up for the guard's lease.
func TestRestartGuardOnClusterWaitsForTheMasters(t *testing.T) {
	t.Parallel()
	const longest = 4 * time.Second
	before := time.Now() // every node starts after this
	cl := redistest.StartCluster(t, 3)
	l := runtime.New(cl.Client(t), runtime.WithKeyPrefix(uniquePrefix(t)), runtime.WithRestartGuard(longest))
	defer l.Close()
	ctx := ctxTimeout(t, 30*time.Second)
	h, err := l.Acquire(ctx, runtime.Lock{Kind: runtime.Mutex, Key: "c", Wait: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	if up := time.Since(before); up < longest {
		t.Errorf("granted %v after the cluster started, before the guard's %v", up.Round(time.Millisecond), longest)
	}
}
