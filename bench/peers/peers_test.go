package peers

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/lockgen/lockgen/redistest"
)

// Every adapter excludes a second client while it holds the key, lets it in
// after Unlock, and counts what it sends.
func TestEveryPeerExcludesAndCounts(t *testing.T) {
	srv := redistest.Start(t)
	for _, p := range Everything() {
		t.Run(p.Name(), func(t *testing.T) {
			a := openClient(t, p, Config{Addr: srv.Addr})
			b := openClient(t, p, Config{Addr: srv.Addr})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			key := "excl:" + p.Library + ":" + p.Setting

			held, err := a.Lock(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			short, cancelShort := context.WithTimeout(ctx, 150*time.Millisecond)
			if h, err := b.Lock(short, key); err == nil {
				h.Unlock(ctx)
				t.Fatal("second client got the lock while the first held it")
			} else if !errors.Is(err, context.DeadlineExceeded) && short.Err() == nil {
				t.Fatalf("second client: %v", err)
			}
			cancelShort()
			if err := held.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
			held, err = b.Lock(ctx, key)
			if err != nil {
				t.Fatalf("after release: %v", err)
			}
			if err := held.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
			if c := a.Counts(); c.Calls < 2 || c.Commands < c.Calls {
				t.Errorf("counts of the first client: %+v", c)
			}
		})
	}
}

func TestByNameFindsEveryPeer(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range Everything() {
		if seen[p.Name()] {
			t.Errorf("duplicate peer %s", p.Name())
		}
		seen[p.Name()] = true
		if q, ok := ByName(p.Name()); !ok || q.Notes != p.Notes {
			t.Errorf("ByName(%q) = %v, %v", p.Name(), q.Name(), ok)
		}
	}
	if _, ok := ByName("nope/none"); ok {
		t.Error("ByName found an unknown peer")
	}
}

// With a lease far shorter than the hold, every peer keeps the lock: by its
// watchdog, or by the manual renewal goroutine the adapter adds. The lease
// leaves each renewal (every lease/3 or so) a few hundred milliseconds of
// slack, which a busy shared machine needs: all peers run at once.
func TestEveryPeerRenewsPastItsLease(t *testing.T) {
	srv := redistest.Start(t)
	const lease = time.Second
	for _, p := range Everything() {
		t.Run(p.Name(), func(t *testing.T) {
			t.Parallel()
			a := openClient(t, p, Config{Addr: srv.Addr, Lease: lease, ManualRenew: true})
			b := openClient(t, p, Config{Addr: srv.Addr, Lease: lease})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			key := "renew:" + p.Library + ":" + p.Setting
			held, err := a.Lock(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(3 * lease)
			short, cancelShort := context.WithTimeout(ctx, 100*time.Millisecond)
			defer cancelShort()
			if h, err := b.Lock(short, key); err == nil {
				h.Unlock(ctx)
				t.Fatal("lock expired although it should have been renewed")
			}
			if err := held.Unlock(ctx); err != nil {
				t.Errorf("unlock after renewals: %v", err)
			}
		})
	}
}

// The other lockgen kinds exclude what the idle-waiters workload makes wait
// on them: a reader behind a writer, a writer behind a reader or a writer,
// a second holder of a one-permit semaphore. Two readers share the key, so
// that the read and write peers are known to be the two sides of one lock.
func TestOtherKindsExcludeTheirWaiters(t *testing.T) {
	srv := redistest.Start(t)
	cases := []struct {
		holder, waiter string
		excludes       bool
	}{
		{"lockgen/write", "lockgen/read", true},
		{"lockgen/read", "lockgen/write", true},
		{"lockgen/write", "lockgen/write", true},
		{"lockgen/semaphore", "lockgen/semaphore", true},
		{"lockgen/read", "lockgen/read", false},
	}
	for i, tc := range cases {
		t.Run(tc.holder+" then "+tc.waiter, func(t *testing.T) {
			open := func(name string) Client {
				p, ok := ByName(name)
				if !ok {
					t.Fatalf("no peer %s", name)
				}
				return openClient(t, p, Config{Addr: srv.Addr})
			}
			a, b := open(tc.holder), open(tc.waiter)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			key := fmt.Sprintf("kinds:%d", i)
			held, err := a.Lock(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			defer held.Unlock(ctx)
			// A waiter that must be excluded is given 150 ms to show it is
			// not; one that must not be gets 5 s to take its lock, which
			// took more than 150 ms once on a loaded machine (load
			// average 12 on 2 cores).
			wait := 150 * time.Millisecond
			if !tc.excludes {
				wait = 5 * time.Second
			}
			short, cancelShort := context.WithTimeout(ctx, wait)
			defer cancelShort()
			h, err := b.Lock(short, key)
			if err == nil {
				h.Unlock(ctx)
			}
			if got := err != nil; got != tc.excludes {
				t.Fatalf("second client excluded: %v (%v), want %v", got, err, tc.excludes)
			}
		})
	}
	for _, p := range OtherKinds() {
		if p.Library != "lockgen" || !p.AutoRenew || p.Polls {
			t.Errorf("%s: library %q, AutoRenew %v, Polls %v", p.Name(), p.Library, p.AutoRenew, p.Polls)
		}
	}
}

// A waiter keeps waiting past its library's own give-up points until the
// caller's context ends: redislock's Obtain stops after the ttl when the
// context has no deadline, which made a waiter of the idle-waiters workload
// quit after one lease.
func TestWaiterOutlastsItsLease(t *testing.T) {
	srv := redistest.Start(t)
	const lease = 300 * time.Millisecond
	for _, name := range []string{"redislock/default", "redsync/default", "lockgen/mutex"} {
		t.Run(name, func(t *testing.T) {
			p, _ := ByName(name)
			a := openClient(t, p, Config{Addr: srv.Addr, Lease: lease, ManualRenew: true})
			b := openClient(t, p, Config{Addr: srv.Addr, Lease: lease})
			key := "outlast:" + name
			held, err := a.Lock(context.Background(), key)
			if err != nil {
				t.Fatal(err)
			}
			defer held.Unlock(context.Background())
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				h, err := b.Lock(ctx, key)
				if err == nil {
					h.Unlock(context.Background())
				}
				done <- err
			}()
			select {
			case err := <-done:
				t.Fatalf("waiter returned after less than 5 leases, before its context ended: %v", err)
			case <-time.After(5 * lease):
			}
			cancel()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("waiter ended with %v, want context.Canceled", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("waiter did not return after its context ended")
			}
		})
	}
}

// openClient opens a client of p, closed when the test ends.
func openClient(t *testing.T, p Peer, c Config) Client {
	t.Helper()
	cl, err := p.Open(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}
