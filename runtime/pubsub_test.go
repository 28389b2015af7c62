package runtime_test

import (
	"context"
	"errors"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/backendtest"
	"github.com/lockgen/lockgen/embedded"
	"github.com/lockgen/lockgen/lua"
	"github.com/lockgen/lockgen/luashim"
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

// waitBusy waits for n busy replies (backendtest.WaitBusy): the second
// one of a waiter comes after it has subscribed to its wake channel.
func waitBusy(t *testing.T, busy <-chan struct{}, n int) {
	t.Helper()
	backendtest.WaitBusy(t, busy, n)
}

// drain discards the busy replies signalled so far (of calls that have
// returned).
func drain(busy <-chan struct{}) {
	for len(busy) > 0 {
		<-busy
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
// The waiter must still be woken when the holder releases: by the grant,
// if the connection is back by then, or else by the "all" that the
// resubscription delivers, since the grant may have been lost. And the
// connection must come back with its channels subscribed, so that a later
// waiter on the same channel is woken by a message again. The lease (30s)
// and the waiter's retry timer (window/3, 10s) are far too long to let
// either waiter in within the 3s the test allows.
func TestWaiterSurvivesKilledPubSubConnection(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	prefix := uniquePrefix(t)
	holder := runtime.New(srv.Client(t), runtime.WithKeyPrefix(prefix))
	defer holder.Close()
	observe, busy := busySignal()
	waiter := runtime.New(srv.Client(t), runtime.WithKeyPrefix(prefix), runtime.WithObserver(observe), runtime.WithWaiterWindow(30*time.Second))
	defer waiter.Close()
	ctx := ctxTimeout(t, 30*time.Second)
	const woken = 3 * time.Second

	// 1. The connection is killed while the waiter sleeps.
	lock := runtime.Lock{Kind: runtime.Mutex, Key: "killed", Lease: 30 * time.Second}
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
	if err := h.Release(); err != nil {
		t.Fatal(err)
	}
	select {
	case first := <-got:
		if first.err != nil {
			t.Fatalf("waiter: %v", first.err)
		}
		if err := first.h.Release(); err != nil {
			t.Fatal(err)
		}
	case <-time.After(woken):
		t.Fatalf("waiter not woken within %v of the release after its connection was killed", woken)
	}

	// 2. Same channel, a later waiter: only a message on the resubscribed
	// connection can wake it in time.
	h, err = holder.Acquire(ctx, lock)
	if err != nil {
		t.Fatal(err)
	}
	drain(busy)
	got = acquireAsync(ctx, waiter, lock)
	// The channel is still subscribed (it lingers), so the waiter joins it
	// before trying and sleeps after its first busy reply: a wake published
	// from then on reaches it, asleep or not.
	waitBusy(t, busy, 1)
	if err := h.Release(); err != nil {
		t.Fatal(err)
	}
	select {
	case second := <-got:
		if second.err != nil {
			t.Fatalf("later waiter: %v", second.err)
		}
		second.h.Release()
	case <-time.After(woken):
		t.Fatalf("later waiter not woken within %v of the release: the channel was not resubscribed", woken)
	}
	subs, err := admin.PubSubNumSub(ctx, prefix+"mutex:{killed}:wake").Result()
	if err != nil {
		t.Fatal(err)
	}
	if n := subs[prefix+"mutex:{killed}:wake"]; n != 1 {
		t.Errorf("wake channel has %d subscribers after the reconnection, want 1", n)
	}
}

// gatedBackend lets a test order what the Locker cannot: the nth call of
// script runs in Redis at once but its reply is held until replyGate is
// closed, and every Subscribe waits for subscribeGate.
type gatedBackend struct {
	backend.Backend
	script        *lua.Script
	nth           int64
	calls         atomic.Int64
	attemptRan    chan struct{} // closed when the nth call has run
	replyGate     chan struct{}
	subscribing   chan struct{} // closed when Subscribe is first called
	subscribeOnce sync.Once
	subscribeGate chan struct{}
}

func newGatedBackend(b backend.Backend, script *lua.Script, nth int64) *gatedBackend {
	return &gatedBackend{Backend: b, script: script, nth: nth, attemptRan: make(chan struct{}), replyGate: make(chan struct{}),
		subscribing: make(chan struct{}), subscribeGate: make(chan struct{})}
}

func (g *gatedBackend) Eval(ctx context.Context, c backend.Call) (any, error) {
	v, err := g.Backend.Eval(ctx, c)
	if c.Script == g.script && g.calls.Add(1) == g.nth {
		close(g.attemptRan)
		<-g.replyGate
	}
	return v, err
}

func (g *gatedBackend) Subscribe(ctx context.Context, channel string, deliver func(string)) (func(), error) {
	g.subscribeOnce.Do(func() { close(g.subscribing) })
	select {
	case <-g.subscribeGate:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return g.Backend.Subscribe(ctx, channel, deliver)
}

// awaitClosed waits for ch to be closed, at most 5s.
func awaitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s did not happen within 5s", what)
	}
}

// A waiter's busy reply, then the release that hands it the lock and
// publishes the grant while nobody listens, and only then does the
// channel's subscription (started by another waiter of the same Locker)
// become live. The waiter must not take the subscription it finds for one
// that was live when its attempt ran: it tries once more and finds the
// lock its own, instead of sleeping until a heartbeat (2/3 lease, 20s).
func TestWakeBeforeAnotherWaitersSubscriptionIsNotMissed(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		var gate *gatedBackend
		observe, busy := busySignal()
		waiters := tg.newLockerVia(t, func(b backend.Backend) backend.Backend {
			gate = newGatedBackend(b, lua.FairAcquire, 1)
			return gate
		}, runtime.WithObserver(observe))
		ctx := ctxTimeout(t, 20*time.Second)
		lock := runtime.Lock{Kind: runtime.Fair, Key: "late-sub", Lease: 30 * time.Second}
		h, err := tg.newLocker(t).Acquire(ctx, lock)
		if err != nil {
			t.Fatal(err)
		}
		first := acquireAsync(ctx, waiters, lock)
		awaitClosed(t, gate.attemptRan, "the first waiter's attempt") // first in the queue; its busy reply held back
		second := acquireAsync(ctx, waiters, lock)
		awaitClosed(t, gate.subscribing, "the second waiter's subscribe") // queued behind it
		if err := h.Release(); err != nil {
			t.Fatal(err) // hands the lock to the first waiter; nobody hears it
		}
		close(gate.subscribeGate)
		waitBusy(t, busy, 2) // the second's two busy replies: the subscription is live
		close(gate.replyGate)

		const bound = 3 * time.Second
		select {
		case a := <-first:
			if a.err != nil {
				t.Fatalf("first waiter: %v", a.err)
			}
			if err := a.h.Release(); err != nil {
				t.Fatal(err)
			}
		case <-time.After(bound):
			t.Fatalf("first waiter, handed the lock before the subscription was live, not granted within %v", bound)
		}
		if b := <-second; b.err != nil {
			t.Fatalf("second waiter: %v", b.err)
		} else if err := b.h.Release(); err != nil {
			t.Fatal(err)
		}
	})
}

// The same with a waiter that joined the channel before its attempt, while
// another waiter's subscription was on its way: readers wait for a writer,
// the second reader's busy reply is held back until the writer's release
// has published "all" (heard by nobody) and the first reader's
// subscription has gone live and let it in. The second reader must try
// again rather than sleep until its retry time (the writer's lease, 30s).
func TestWakeBeforeSubscriptionOnItsWayIsNotMissed(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		var gate *gatedBackend
		observe, busy := busySignal()
		readers := tg.newLockerVia(t, func(b backend.Backend) backend.Backend {
			gate = newGatedBackend(b, lua.ReadAcquire, 2)
			return gate
		}, runtime.WithObserver(observe))
		ctx := ctxTimeout(t, 20*time.Second)
		write := runtime.Lock{Kind: runtime.Write, Key: "late-sub", Lease: 30 * time.Second}
		read := runtime.Lock{Kind: runtime.Read, Key: "late-sub", Lease: 30 * time.Second}
		w, err := tg.newLocker(t).Acquire(ctx, write)
		if err != nil {
			t.Fatal(err)
		}
		first := acquireAsync(ctx, readers, read)
		awaitClosed(t, gate.subscribing, "the first reader's subscribe")
		waitBusy(t, busy, 1) // the first reader's
		second := acquireAsync(ctx, readers, read)
		awaitClosed(t, gate.attemptRan, "the second reader's attempt") // it joined the channel first
		if err := w.Release(); err != nil {
			t.Fatal(err) // publishes "all"; nobody hears it
		}
		close(gate.subscribeGate)
		a := <-first // subscribed, tried again, got in
		if a.err != nil {
			t.Fatalf("first reader: %v", a.err)
		}
		defer a.h.Release()
		close(gate.replyGate)

		const bound = 3 * time.Second
		select {
		case b := <-second:
			if b.err != nil {
				t.Fatalf("second reader: %v", b.err)
			}
			if err := b.h.Release(); err != nil {
				t.Fatal(err)
			}
		case <-time.After(bound):
			t.Fatalf("second reader, busy when the writer released, not let in within %v", bound)
		}
	})
}

// stuckSubscribeBackend's Subscribe does not return until release is
// closed, whatever its context says: go-redis dialing a Pub/Sub connection
// to a stalled server waits out its own read timeout the same way.
type stuckSubscribeBackend struct {
	backend.Backend
	subscribing chan struct{} // closed when Subscribe is first called
	once        sync.Once
	release     chan struct{}
}

func (b *stuckSubscribeBackend) Subscribe(ctx context.Context, channel string, deliver func(string)) (func(), error) {
	b.once.Do(func() { close(b.subscribing) })
	<-b.release
	return b.Backend.Subscribe(ctx, channel, deliver)
}

// A waiter's wait bounds its subscribe too: with the subscription stuck,
// a waiter with a 300 ms wait behind a holder still returns ErrNotAcquired
// at the end of its wait, and the subscription, once it goes through, is
// dropped with the channel.
func TestStuckSubscribeDoesNotStretchTheWait(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		stuck := &stuckSubscribeBackend{subscribing: make(chan struct{}), release: make(chan struct{})}
		defer close(stuck.release)
		waiters := tg.newLockerVia(t, func(b backend.Backend) backend.Backend {
			stuck.Backend = b
			return stuck
		})
		ctx := ctxTimeout(t, 20*time.Second)
		for _, kind := range []runtime.Kind{runtime.Mutex, runtime.Fair} {
			lock := runtime.Lock{Kind: kind, Key: "stuck-sub", Lease: 30 * time.Second}
			h, err := tg.newLocker(t).Acquire(ctx, lock)
			if err != nil {
				t.Fatal(err)
			}
			const wait = 300 * time.Millisecond
			lock.Wait = wait
			start := time.Now()
			_, err = waiters.Acquire(ctx, lock)
			took := time.Since(start)
			if !errors.Is(err, runtime.ErrNotAcquired) {
				t.Errorf("%v waiter with its subscribe stuck: got %v, want ErrNotAcquired", kind, err)
			}
			// Generous for a busy machine; the stuck subscribe alone would
			// hold it until the test ends.
			if took > wait+2*time.Second {
				t.Errorf("%v waiter with its subscribe stuck returned after %v; want about %v", kind, took, wait)
			}
			if err := h.Release(); err != nil {
				t.Fatal(err)
			}
		}
		awaitClosed(t, stuck.subscribing, "the waiter's subscribe")
	})
}

// refusedSubscribeBackend refuses every subscription as a server that is
// not there would: the dial fails with connection refused.
type refusedSubscribeBackend struct{ backend.Backend }

func (refusedSubscribeBackend) Subscribe(context.Context, string, func(string)) (func(), error) {
	return nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
}

// A waiter whose wake channel cannot be subscribed (and not for want of
// permission) tries again after a transient pause, not at its retry
// bound: here the end of the holder's 30 s lease, for both kinds. So it
// gets the lock soon after the holder lets go, with no message to wake it.
func TestWaiterWithoutSubscriptionTriesAgainSoon(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		ctx := ctxTimeout(t, 40*time.Second)
		for _, kind := range []runtime.Kind{runtime.Mutex, runtime.Fair} {
			observe, busy := busySignal()
			watched := tg.newLockerVia(t, func(b backend.Backend) backend.Backend { return refusedSubscribeBackend{b} }, runtime.WithObserver(observe))
			lock := runtime.Lock{Kind: kind, Key: "refused-sub-" + kind.String(), Lease: 30 * time.Second}
			h, err := tg.newLocker(t).Acquire(ctx, lock)
			if err != nil {
				t.Fatal(err)
			}
			lock.Wait = 30 * time.Second
			got := make(chan error, 1)
			go func() {
				w, err := watched.Acquire(ctx, lock)
				if err == nil {
					err = w.Release()
				}
				got <- err
			}()
			<-busy // the waiter has been told the lock is busy
			released := time.Now()
			if err := h.Release(); err != nil {
				t.Fatal(err)
			}
			// A retry bound of the holder's lease would take about 30 s; a
			// transient pause is at most a quarter of a second.
			const bound = 10 * time.Second
			select {
			case err := <-got:
				if err != nil {
					t.Fatalf("%v waiter: %v", kind, err)
				}
				t.Logf("%v waiter got the lock %v after the release", kind, time.Since(released).Round(time.Millisecond))
			case <-time.After(bound):
				t.Fatalf("%v waiter without a subscription did not get the lock within %v of the release", kind, bound)
			}
		}
	})
}

// An acquire whose reply is still on its way while RenewNow checks every
// held lock misses that check; if the lock went meanwhile (locktest's
// Expire removes it, then calls RenewNow), its holder is told as soon as
// the acquire returns, not at its first renewal a third of the lease on.
func TestAcquireInFlightDuringRenewNowIsChecked(t *testing.T) {
	srv := luashim.New(nil)
	g := newGatedBackend(embedded.NewBackend(srv), lua.MutexAcquire, 1)
	l := runtime.NewWithBackend(g)
	t.Cleanup(func() { l.Close() })
	lock := runtime.Lock{Kind: runtime.Mutex, Key: "inflight", Lease: time.Minute}
	got := make(chan acquired, 1)
	go func() {
		h, err := l.Acquire(context.Background(), lock)
		got <- acquired{h, err, time.Now()}
	}()
	awaitClosed(t, g.attemptRan, "the acquire")
	if _, err := srv.Do("DEL", "lockgen:mutex:{inflight}"); err != nil {
		t.Fatal(err)
	}
	if err := l.RenewNow(context.Background()); err != nil {
		t.Fatal(err)
	}
	close(g.replyGate)
	a := <-got
	if a.err != nil {
		t.Fatal(a.err)
	}
	select {
	case <-a.h.Context().Done():
		if !errors.Is(context.Cause(a.h.Context()), runtime.ErrLockLost) {
			t.Errorf("cause %v, want ErrLockLost", context.Cause(a.h.Context()))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the holder was not told within 5s that its lock went during its acquire (its renewal is 20s away)")
	}
}
