package runtime_test

import (
	"context"
	"testing"
	"time"

	"github.com/lockgen/lockgen/redistest"
	"github.com/lockgen/lockgen/runtime"
)

// busySignal returns an Observer that reports every busy reply on the
// returned channel, without ever blocking the acquire that saw it.
func busySignal() (runtime.Observer, <-chan struct{}) {
	busy := make(chan struct{}, 64)
	return func(e runtime.Event) {
		if e.Kind == runtime.EventBusy {
			select {
			case busy <- struct{}{}:
			default:
			}
		}
	}, busy
}

// waitBusy waits for n busy replies: the second one of a waiter comes after
// it has subscribed to its wake channel.
func waitBusy(t *testing.T, busy <-chan struct{}, n int) {
	t.Helper()
	for range n {
		select {
		case <-busy:
		case <-time.After(5 * time.Second):
			t.Fatal("the waiter got no busy reply within 5s")
		}
	}
}

// acquireAsync acquires lock in a goroutine and sends the result.
func acquireAsync(ctx context.Context, l *runtime.Locker, lock runtime.Lock) <-chan acquired {
	got := make(chan acquired, 1)
	go func() {
		h, err := l.Acquire(ctx, lock)
		got <- acquired{h, err, time.Now()}
	}()
	return got
}

type acquired struct {
	h   *runtime.Held
	err error
	at  time.Time
}

// The Pub/Sub connection dies under a waiter (killed from the server side).
// The waiter must still get the lock once the holder releases it, at the
// latest when its retry timer (the lease's remaining time) fires; and the
// connection must come back with its channels resubscribed, so that a later
// waiter on the same channel is woken by a message again, long before the
// holder's lease could run out.
func TestWaiterSurvivesKilledPubSubConnection(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	prefix := uniquePrefix(t)
	holder := runtime.New(srv.Client(t), runtime.WithKeyPrefix(prefix))
	defer holder.Close()
	observe, busy := busySignal()
	waiter := runtime.New(srv.Client(t), runtime.WithKeyPrefix(prefix), runtime.WithObserver(observe))
	defer waiter.Close()
	ctx := ctxTimeout(t, 30*time.Second)

	// 1. The connection is killed while the waiter sleeps; the lease bounds
	// how long it can take the waiter to notice the release.
	const lease = time.Second
	lock := runtime.Lock{Kind: runtime.Mutex, Key: "killed", Lease: lease}
	h, err := holder.Acquire(ctx, lock)
	if err != nil {
		t.Fatal(err)
	}
	got := acquireAsync(ctx, waiter, lock)
	waitBusy(t, busy, 2)
	killed, err := admin.ClientKillByFilter(ctx, "TYPE", "pubsub").Result()
	if err != nil {
		t.Fatal(err)
	}
	if killed < 1 {
		t.Fatalf("CLIENT KILL TYPE pubsub killed %d connections, want the waiter's", killed)
	}
	released := time.Now()
	if err := h.Release(); err != nil {
		t.Fatal(err)
	}
	var first acquired
	select {
	case first = <-got:
	case <-time.After(lease + 2*time.Second):
		t.Fatalf("waiter not granted within %v of the release (retry timer bound: lease %v)", lease+2*time.Second, lease)
	}
	if first.err != nil {
		t.Fatalf("waiter: %v", first.err)
	}
	if took := first.at.Sub(released); took > lease+500*time.Millisecond {
		t.Errorf("waiter granted %v after the release, beyond its retry bound (lease %v)", took, lease)
	}
	if err := first.h.Release(); err != nil {
		t.Fatal(err)
	}

	// 2. Same channel, a later waiter, a holder with a long lease: only a
	// message on the resubscribed connection can wake it within 2s.
	long := lock
	long.Lease = 30 * time.Second
	// The waiter's release was contended, so mutex_release reserved the
	// lock for waiters for up to 10 ms; let that lapse, so the holder takes
	// it without waiting (and without a wake subscription of its own).
	time.Sleep(20 * time.Millisecond)
	h, err = holder.Acquire(ctx, long)
	if err != nil {
		t.Fatal(err)
	}
	for len(busy) > 0 {
		<-busy
	}
	got = acquireAsync(ctx, waiter, long)
	// The channel is still subscribed (it lingers), so the waiter joins it
	// before trying and sleeps after its first busy reply.
	waitBusy(t, busy, 1)
	time.Sleep(10 * time.Millisecond) // let it fall asleep
	if err := h.Release(); err != nil {
		t.Fatal(err)
	}
	select {
	case second := <-got:
		if second.err != nil {
			t.Fatalf("later waiter: %v", second.err)
		}
		second.h.Release()
	case <-time.After(2 * time.Second):
		t.Fatal("later waiter not woken within 2s of the release (lease 30s): the channel was not resubscribed")
	}
	subs, err := admin.PubSubNumSub(ctx, prefix+"mutex:{killed}:wake").Result()
	if err != nil {
		t.Fatal(err)
	}
	if n := subs[prefix+"mutex:{killed}:wake"]; n != 1 {
		t.Errorf("wake channel has %d subscribers after the reconnection, want 1", n)
	}
}
