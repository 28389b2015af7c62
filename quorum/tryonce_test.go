package quorum_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/backendtest"
	"github.com/lockgen/lockgen/embedded"
	"github.com/lockgen/lockgen/quorum"
	"github.com/lockgen/lockgen/runtime"
)

// A try-once acquire in a split vote (one server grants, one has the lock
// held by another, the third does not answer) returns busy at once: it
// used to wait for the silent server up to a tenth of the lease (a minute
// at a 10-minute lease).
func TestQuorumTryOnceSplitVote(t *testing.T) {
	busy := embedded.NewBackend(nil)
	backends := []backend.Backend{busy, embedded.NewBackend(nil), hangingBackend{embedded.NewBackend(nil)}}
	if _, err := busy.Server().Do("SET", "lockgen:mutex:{t}", "other 7 -", "PX", "600000"); err != nil {
		t.Fatal(err)
	}
	l, err := quorum.NewWithBackends(backends)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	const lease = 10 * time.Minute
	err, took := backendtest.AcquireWithin(t, l, context.Background(), runtime.Lock{Kind: runtime.Mutex, Key: "t", Lease: lease, Wait: runtime.NoWait}, 2*time.Minute)
	if !errors.Is(err, runtime.ErrNotAcquired) {
		t.Fatalf("try-once in a split vote: %v, want ErrNotAcquired", err)
	}
	if took > 2*time.Second {
		t.Errorf("try-once in a split vote returned after %v, want at once (a tenth of the lease is %v)", took.Round(time.Millisecond), lease/10)
	}
	t.Logf("try-once in a split vote: busy after %v", took.Round(time.Millisecond))
}

// frozenSubscriber is a server whose subscriptions are never confirmed:
// Subscribe returns only when its context ends.
type frozenSubscriber struct{ backend.Backend }

func (frozenSubscriber) Subscribe(ctx context.Context, channel string, deliver func(string)) (func(), error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// A quorum's subscription returns once a majority of its servers confirmed
// it: a release by any majority publishes on one of them. It used to wait
// for every server, as long as its context allowed with one frozen.
func TestQuorumSubscribeMajority(t *testing.T) {
	backends := []backend.Backend{embedded.NewBackend(nil), embedded.NewBackend(nil), frozenSubscriber{embedded.NewBackend(nil)}}
	l, err := quorum.NewWithBackends(backends)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx := backendtest.Timeout(t, 10*time.Second)
	start := time.Now()
	woken := make(chan string, 4)
	unsub, err := l.Backend().Subscribe(ctx, "lockgen:wake:{s}", func(p string) { woken <- p })
	took := time.Since(start)
	if err != nil {
		t.Fatalf("subscribe with one server of 3 frozen: %v", err)
	}
	defer unsub()
	if took > 2*time.Second {
		t.Errorf("subscribe with one server of 3 frozen returned after %v, want once two confirmed", took.Round(time.Millisecond))
	}
	if _, err := backends[1].(*embedded.Backend).Server().Do("PUBLISH", "lockgen:wake:{s}", "all"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-woken:
	case <-ctx.Done():
		t.Fatal("a message published on a server that confirmed did not arrive")
	}
	t.Logf("subscribe with one server of 3 frozen: %v", took.Round(time.Millisecond))
}

// With a majority frozen, the subscription fails when the caller's context
// ends, with ErrNoQuorum: the servers' own subscriptions do not hold it.
func TestQuorumSubscribeNoMajority(t *testing.T) {
	backends := []backend.Backend{embedded.NewBackend(nil), frozenSubscriber{embedded.NewBackend(nil)}, frozenSubscriber{embedded.NewBackend(nil)}}
	l, err := quorum.NewWithBackends(backends)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx := backendtest.Timeout(t, 300*time.Millisecond)
	start := time.Now()
	_, err = l.Backend().Subscribe(ctx, "lockgen:wake:{s}", func(string) {})
	if took := time.Since(start); !errors.Is(err, quorum.ErrNoQuorum) || took > 2*time.Second {
		t.Errorf("subscribe with 2 of 3 frozen: %v after %v, want ErrNoQuorum when ctx ends (300 ms)", err, took.Round(time.Millisecond))
	}
}
