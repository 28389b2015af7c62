package embedded_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
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

// Every kind works on a Locker from embedded.New: exclusive kinds exclude a
// second holder, shared kinds admit as many as they should, and a lock is
// free again after its release.
func TestNewEveryKind(t *testing.T) {
	l := embedded.New()
	defer l.Close()
	ctx := ctxTimeout(t, 10*time.Second)
	cases := []struct {
		lock   runtime.Lock
		admits int // holders at once
	}{
		{runtime.Lock{Kind: runtime.Mutex, Key: "m"}, 1},
		{runtime.Lock{Kind: runtime.Fair, Key: "f"}, 1},
		{runtime.Lock{Kind: runtime.Write, Key: "w"}, 1},
		{runtime.Lock{Kind: runtime.Read, Key: "r"}, 5}, // any number; 5 tried
		{runtime.Lock{Kind: runtime.Semaphore, Key: "s", Permits: 3}, 3},
	}
	for _, c := range cases {
		t.Run(c.lock.Kind.String(), func(t *testing.T) {
			try := c.lock
			try.Wait = runtime.NoWait
			var held []*runtime.Held
			var last int64
			for i := range c.admits {
				h, err := l.Acquire(ctx, try) // ctx, not a held context: a new holder each time
				if err != nil {
					t.Fatalf("holder %d of %d: %v", i+1, c.admits, err)
				}
				fence, ok := runtime.Fence(h.Context())
				if !ok || fence <= 0 {
					t.Fatalf("holder %d: fence %d, %v", i+1, fence, ok)
				}
				if c.admits == 1 && fence <= last {
					t.Fatalf("fence %d not above the previous %d", fence, last)
				}
				last = fence
				held = append(held, h)
			}
			if c.lock.Kind != runtime.Read {
				if _, err := l.Acquire(ctx, try); !errors.Is(err, runtime.ErrNotAcquired) {
					t.Fatalf("holder %d: %v, want ErrNotAcquired", c.admits+1, err)
				}
			}
			for _, h := range held {
				if err := h.Release(); err != nil {
					t.Fatal(err)
				}
			}
			h, err := l.Acquire(ctx, try)
			if err != nil {
				t.Fatalf("after release: %v", err)
			}
			if err := h.Release(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// Goroutines of one embedded Locker exclude each other as processes would.
func TestNewMutexExcludesGoroutines(t *testing.T) {
	l := embedded.New()
	defer l.Close()
	ctx := ctxTimeout(t, 20*time.Second)
	var inside, most atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				h, err := l.Acquire(ctx, runtime.Lock{Kind: runtime.Mutex, Key: "counter"})
				if err != nil {
					errs <- err
					return
				}
				n := inside.Add(1)
				// CAS, so a smaller count stored late cannot hide an overlap.
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				time.Sleep(100 * time.Microsecond)
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
		t.Fatal(err)
	}
	if m := most.Load(); m != 1 {
		t.Fatalf("%d goroutines inside the mutex at once", m)
	}
}

// Two Lockers on one Backend share its keyspace and Pub/Sub: they contend
// like two processes on one Redis, and a release by one wakes a waiter of
// the other by a message, not by the lease running out.
func TestLockersSharingABackendContend(t *testing.T) {
	b := embedded.NewBackend(nil)
	p1 := runtime.NewWithBackend(b)
	defer p1.Close()
	// A waiter window as long as the lease: only the release's message can
	// let p2's waiter in within 2s.
	busy := make(chan struct{}, 16)
	p2 := runtime.NewWithBackend(b, runtime.WithWaiterWindow(20*time.Second), runtime.WithObserver(func(e runtime.Event) {
		if e.Kind == runtime.EventBusy {
			busy <- struct{}{}
		}
	}))
	defer p2.Close()
	ctx := ctxTimeout(t, 10*time.Second)
	lock := runtime.Lock{Kind: runtime.Mutex, Key: "order:7", Lease: 20 * time.Second}

	h1, err := p1.Acquire(ctx, lock)
	if err != nil {
		t.Fatal(err)
	}
	f1, _ := runtime.Fence(h1.Context())
	try := lock
	try.Wait = runtime.NoWait
	if _, err := p2.Acquire(ctx, try); !errors.Is(err, runtime.ErrNotAcquired) {
		t.Fatalf("second Locker while the first holds: %v, want ErrNotAcquired", err)
	}
	<-busy
	if !hasKey(b, "lockgen:mutex:{order:7}") {
		t.Fatalf("lock key not in the shared keyspace: %v", keys(b))
	}

	got := make(chan error, 1)
	var f2 int64
	go func() {
		h2, err := p2.Acquire(ctx, lock)
		if err == nil {
			f2, _ = runtime.Fence(h2.Context())
			err = h2.Release()
		}
		got <- err
	}()
	// Its first attempt, then (subscribed) its second: asleep after that.
	for range 2 {
		select {
		case <-busy:
		case <-ctx.Done():
			t.Fatal("the waiter never got busy")
		}
	}
	if err := h1.Release(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("waiter on the second Locker: %v", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("waiter not woken within 2s of the release (lease 20s)")
	}
	if f2 <= f1 {
		t.Errorf("second holder's fence %d not above the first's %d", f2, f1)
	}
	// Nothing is left behind once holders and waiters are gone but the
	// lock's last fence, kept for the fence floor.
	if k := keysBeyondFloor(b); len(k) > 0 {
		t.Errorf("keys left after every lock was released: %v", k)
	}
}

// keysBeyondFloor lists the keys that hold more than a lock's last fence:
// a tombstone ("! <fence> 0") stays for lua.FenceFloor after a release.
func keysBeyondFloor(b *embedded.Backend) []string {
	var out []string
	for _, k := range b.Server().Snapshot() {
		if k.Type != "string" || !strings.HasPrefix(k.String, "! ") {
			out = append(out, k.Key)
		}
	}
	return out
}

func keys(b *embedded.Backend) []string {
	var out []string
	for _, k := range b.Server().Snapshot() {
		out = append(out, k.Key)
	}
	return out
}

func hasKey(b *embedded.Backend, key string) bool {
	for _, k := range keys(b) {
		if k == key {
			return true
		}
	}
	return false
}

// Close stops waiters and new acquires with ErrClosed and cancels the
// contexts of locks still held (nothing renews them any more); those locks
// can still be released, and Close can be called again.
func TestClose(t *testing.T) {
	b := embedded.NewBackend(nil)
	l := runtime.NewWithBackend(b)
	other := runtime.NewWithBackend(b)
	defer other.Close()
	ctx := ctxTimeout(t, 10*time.Second)
	lock := runtime.Lock{Kind: runtime.Mutex, Key: "job", Lease: 20 * time.Second}

	held, err := l.Acquire(ctx, runtime.Lock{Kind: runtime.Mutex, Key: "mine"})
	if err != nil {
		t.Fatal(err)
	}
	blocker, err := other.Acquire(ctx, lock)
	if err != nil {
		t.Fatal(err)
	}
	defer blocker.Release()
	waiting := make(chan error, 1)
	go func() {
		_, err := l.Acquire(ctx, lock)
		waiting <- err
	}()
	time.Sleep(20 * time.Millisecond)

	if err := l.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	select {
	case err := <-waiting:
		if !errors.Is(err, runtime.ErrClosed) {
			t.Fatalf("waiting Acquire after Close: %v, want ErrClosed", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("waiting Acquire not stopped within 2s of Close")
	}
	select {
	case <-held.Context().Done():
		cause := context.Cause(held.Context())
		if !errors.Is(cause, runtime.ErrLockLost) || !errors.Is(cause, runtime.ErrClosed) {
			t.Fatalf("held context cause %v, want ErrLockLost and ErrClosed", cause)
		}
	default:
		t.Fatal("held context not cancelled by Close")
	}
	if err := held.Release(); err != nil {
		t.Fatalf("Release after Close: %v", err)
	}
	if slices.Contains(keysBeyondFloor(b), "lockgen:mutex:{mine}") {
		t.Fatal("lock still held in the keyspace after Release")
	}
	if _, err := l.Acquire(ctx, lock); !errors.Is(err, runtime.ErrClosed) {
		t.Fatalf("Acquire after Close: %v, want ErrClosed", err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

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
