package backendtest

import (
	"context"
	"time"

	"github.com/lockgen/lockgen/runtime"
)

// blockerOf is the lock that keeps a waiter of kind out: a writer keeps a
// reader out, a full semaphore (both permits held) the next holder.
func blockerOf(kind runtime.Kind, key string, lease time.Duration) runtime.Lock {
	l := lockOf(kind, key, lease)
	if kind == runtime.Read {
		l.Kind = runtime.Write
	}
	return l
}

// busySignal is an observer that signals each busy reply.
func busySignal() (runtime.Option, <-chan struct{}) {
	busy := make(chan struct{}, 64)
	return runtime.WithObserver(func(ev runtime.Event) {
		if ev.Kind == runtime.EventBusy {
			select {
			case busy <- struct{}{}:
			default:
			}
		}
	}), busy
}

// asleep waits for a waiter's second busy reply: the first attempt, then
// the one after it subscribed to the wake channel. After that it sleeps
// until a message or its lease-based retry wakes it.
func (e *env) asleep(busy <-chan struct{}) {
	e.t.Helper()
	for range 2 {
		select {
		case <-busy:
		case <-time.After(15 * time.Second):
			e.t.Fatal("the waiter had no busy reply within 15s")
		}
	}
}

type acquired struct {
	h   *runtime.Held
	err error
}

func acquireAsync(ctx context.Context, l *runtime.Locker, lock runtime.Lock) <-chan acquired {
	got := make(chan acquired, 1)
	go func() {
		h, err := l.Acquire(ctx, lock)
		got <- acquired{h, err}
	}()
	return got
}

// wakeUp: a waiter on another Locker, asleep behind a holder with a
// two-minute lease, gets the lock within 10s of the release (it takes
// milliseconds; the slack is for a busy machine): only the release's wake
// message can let it in that soon. Its fence is above the holder's for
// exclusive kinds.
func wakeUp(e *env, kind runtime.Kind) {
	t := e.t
	observe, busy := busySignal()
	holder, waiter := e.locker(), e.locker(observe)
	ctx := e.ctx(60 * time.Second)
	var held []*runtime.Held
	for range capacity(blockerOf(kind, "", 0).Kind) {
		h, err := holder.Acquire(ctx, noWait(blockerOf(kind, "wake", longLease)))
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, h)
	}
	first, _ := runtime.Fence(held[0].Context())
	got := acquireAsync(ctx, waiter, lockOf(kind, "wake", longLease))
	e.asleep(busy)
	released := time.Now()
	if err := held[0].Release(); err != nil {
		t.Fatal(err)
	}
	select {
	case a := <-got:
		if a.err != nil {
			t.Fatalf("waiter: %v", a.err)
		}
		t.Logf("woken %v after the release", time.Since(released))
		if fence, _ := runtime.Fence(a.h.Context()); exclusive(kind) && fence <= first {
			t.Errorf("waiter's fence %d not above the holder's %d", fence, first)
		}
		held = append(held[1:], a.h)
	case <-time.After(10 * time.Second):
		t.Fatalf("waiter not woken within 10s of the release (lease %v)", longLease)
	}
	for _, h := range held {
		if err := h.Release(); err != nil {
			t.Fatal(err)
		}
	}
	e.checkClean(kind, "wake")
}
