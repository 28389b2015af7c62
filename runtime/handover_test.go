package runtime_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/lua"
	"github.com/lockgen/lockgen/runtime"
)

// A fair release hands the lock to the head of the queue, a mutex release
// to the registered waiter whose registration runs out first, and says so in the wake message ("grant:<fence>:<holder>"):
// the waiter returns from Acquire without another attempt of its own.

// dropGrants is a Backend that loses every "grant:" wake message, as a
// broken Pub/Sub connection would, counts them, and closes first when it
// has dropped one.
type dropGrants struct {
	backend.Backend
	dropped atomic.Int64
	first   chan struct{}
	once    sync.Once
}

func newDropGrants(b backend.Backend) *dropGrants {
	return &dropGrants{Backend: b, first: make(chan struct{})}
}

func (d *dropGrants) Subscribe(ctx context.Context, channel string, deliver func(string)) (func(), error) {
	return d.Backend.Subscribe(ctx, channel, func(payload string) {
		if strings.HasPrefix(payload, "grant:") {
			d.dropped.Add(1)
			d.once.Do(func() { close(d.first) })
			return
		}
		deliver(payload)
	})
}

// The head of the queue gets the lock from the release alone: not one
// fair_acquire between the holder's release and the grant. (Its heartbeats
// are another script, due only lease/3 after it queued.)
func TestFairHandoffNeedsNoAttempt(t *testing.T) {
	prefix := uniquePrefix(t)
	holder := runtime.New(redisClient(t), runtime.WithKeyPrefix(prefix))
	t.Cleanup(func() { holder.Close() })
	observe, busy := busySignal()
	calls := &scriptCalls{script: lua.FairAcquire}
	rdb := redisClient(t)
	rdb.AddHook(calls)
	waiter := runtime.New(rdb, runtime.WithKeyPrefix(prefix), runtime.WithObserver(observe))
	t.Cleanup(func() { waiter.Close() })
	ctx := ctxTimeout(t, 10*time.Second)
	lock := runtime.Lock{Kind: runtime.Fair, Key: "handoff", Lease: 30 * time.Second}

	h, err := holder.Acquire(ctx, lock)
	if err != nil {
		t.Fatal(err)
	}
	first, _ := runtime.Fence(h.Context())
	got := acquireAsync(ctx, waiter, lock)
	// Attempt, subscribe, attempt: it sleeps now. The hook counts a call
	// before sending it, and a busy event follows its reply, so every
	// attempt made so far is counted.
	waitBusy(t, busy, 2)
	before := calls.count()
	if err := h.Release(); err != nil {
		t.Fatal(err)
	}
	a := <-got
	if a.err != nil {
		t.Fatal(a.err)
	}
	defer a.h.Release()
	if n := calls.count() - before; n != 0 {
		t.Errorf("the head sent %d fair_acquire after the release, want 0 (handed over)", n)
	}
	if fence, ok := runtime.Fence(a.h.Context()); !ok || fence <= first {
		t.Errorf("fence of the handed-over lock %d (%v), want > %d", fence, ok, first)
	}
}

// countAcquires is dropGrants that also counts the calls of one acquire
// script.
type countAcquires struct {
	*dropGrants
	script *lua.Script
	calls  atomic.Int64
}

func (c *countAcquires) Eval(ctx context.Context, call backend.Call) (any, error) {
	if call.Script == c.script {
		c.calls.Add(1)
	}
	return c.dropGrants.Eval(ctx, call)
}

func (c *countAcquires) EvalBatch(ctx context.Context, calls []backend.Call) []backend.Reply {
	for _, call := range calls {
		if call.Script == c.script {
			c.calls.Add(1)
		}
	}
	return c.dropGrants.EvalBatch(ctx, calls)
}

// A waiter of the releaser's own Locker hears of its grant from the
// release's reply: with every grant message lost, it still returns at once
// after the release (its next attempt, or a heartbeat, is not due for
// 10s). Neither needs an acquire call of its own: a fair grant is the
// waiter's, and a mutex offer learnt from the release's reply counts held
// at once (its claim is a renewal, TestOwnReleaseOfferIsHeldBeforeItsClaim).
func TestSameLockerHandoffNeedsNoMessage(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		for _, kind := range exclusiveKinds {
			t.Run(kind.String(), func(t *testing.T) {
				var counted *countAcquires
				observe, busy := busySignal()
				l := tg.newLockerVia(t, func(b backend.Backend) backend.Backend {
					counted = &countAcquires{dropGrants: newDropGrants(b), script: acquireScript[kind]}
					return counted
				}, runtime.WithObserver(observe), runtime.WithWaiterWindow(30*time.Second))
				ctx := ctxTimeout(t, 10*time.Second)
				lock := runtime.Lock{Kind: kind, Key: "local", Lease: 30 * time.Second}
				h, err := l.Acquire(ctx, lock)
				if err != nil {
					t.Fatal(err)
				}
				first, _ := runtime.Fence(h.Context())
				got := acquireAsync(ctx, l, lock)
				waitBusy(t, busy, 2) // attempt, subscribe, attempt: it sleeps now
				before := counted.calls.Load()
				if err := h.Release(); err != nil {
					t.Fatal(err)
				}
				a := <-got
				if a.err != nil {
					t.Fatal(a.err)
				}
				select {
				case <-counted.first:
				case <-time.After(5 * time.Second):
					t.Fatal("the release published no grant message (to drop) within 5s")
				}
				if n, want := counted.calls.Load()-before, claimCalls[kind]; n != want {
					t.Errorf("the waiter made %d acquire calls after the release, want %d (told by the release's reply)", n, want)
				}
				if fence, ok := runtime.Fence(a.h.Context()); !ok || fence <= first {
					t.Errorf("fence of the handed-over lock %d (%v), want > %d", fence, ok, first)
				}
				if err := a.h.Release(); err != nil {
					t.Fatal(err)
				}
				assertFree(t, ctx, tg, lock, 0)
			})
		}
	})
}

// claimCalls is how many acquire calls a waiter makes once a release has
// handed it the lock by a release of its own Locker: a fair grant is the
// waiter's at once, and so is a mutex offer, whose claim follows as a
// renewal.
var claimCalls = map[runtime.Kind]int64{runtime.Fair: 0, runtime.Mutex: 0}

// acquireScript is the acquire script of each exclusive kind.
var acquireScript = map[runtime.Kind]*lua.Script{runtime.Mutex: lua.MutexAcquire, runtime.Fair: lua.FairAcquire}

// exclusiveKinds are the kinds whose release hands the lock over.
var exclusiveKinds = []runtime.Kind{runtime.Fair, runtime.Mutex}

// lostGrantSetup makes a holder hold lock and a waiter, whose grant
// messages are dropped, wait for it (its second busy reply seen). It
// returns the holder's hold, the waiter's result, and the dropper.
func lostGrantSetup(t *testing.T, tg target, ctx, waitCtx context.Context, lock runtime.Lock) (*runtime.Held, <-chan acquired, *dropGrants) {
	t.Helper()
	var drop *dropGrants
	observe, busy := busySignal()
	waiter := tg.newLockerVia(t, func(b backend.Backend) backend.Backend {
		drop = newDropGrants(b)
		return drop
	}, runtime.WithObserver(observe))
	h, err := tg.newLocker(t).Acquire(ctx, lock)
	if err != nil {
		t.Fatal(err)
	}
	got := acquireAsync(waitCtx, waiter, lock)
	waitBusy(t, busy, 2) // attempt, subscribe, attempt
	return h, got, drop
}

// The grant message is lost: the waiter still gets the lock, from its next
// attempt (or fair heartbeat), as one hold (its release frees the lock).
func TestLostGrantIsClaimed(t *testing.T) {
	t.Parallel()
	forEachTarget(t, func(t *testing.T, tg target) {
		for _, kind := range exclusiveKinds {
			t.Run(kind.String(), func(t *testing.T) {
				ctx := ctxTimeout(t, 10*time.Second)
				lock := runtime.Lock{Kind: kind, Key: "lost", Lease: 600 * time.Millisecond}
				h, got, drop := lostGrantSetup(t, tg, ctx, ctx, lock)
				first, _ := runtime.Fence(h.Context())
				released := time.Now()
				if err := h.Release(); err != nil {
					t.Fatal(err)
				}
				a := <-got
				if a.err != nil {
					t.Fatal(a.err)
				}
				if drop.dropped.Load() == 0 {
					t.Fatal("no grant message was published (and dropped)")
				}
				// Claimed by the retry timer (the holder's lease left, a
				// little less than the lease) or a fair heartbeat (lease/3).
				if d := a.at.Sub(released); d > lock.Lease+200*time.Millisecond {
					t.Errorf("lost grant claimed %v after the release, want within the lease %v (+200ms)", d, lock.Lease)
				}
				if fence, _ := runtime.Fence(a.h.Context()); fence <= first {
					t.Errorf("fence %d, want > %d", fence, first)
				}
				if err := a.h.Release(); err != nil {
					t.Fatal(err)
				}
				assertFree(t, ctx, tg, lock, 0)
			})
		}
	})
}

// The waiter gives up after the lock was handed to it but before it heard:
// the lock is given back at once, not left to run out its lease.
func TestGrantGivenBackOnGiveUp(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		for _, kind := range exclusiveKinds {
			t.Run(kind.String(), func(t *testing.T) {
				ctx := ctxTimeout(t, 10*time.Second)
				lock := runtime.Lock{Kind: kind, Key: "giveback", Lease: 20 * time.Second}
				cctx, cancel := context.WithCancel(ctx)
				defer cancel()
				h, got, drop := lostGrantSetup(t, tg, ctx, cctx, lock)
				if err := h.Release(); err != nil {
					t.Fatal(err)
				}
				select {
				case <-drop.first:
				case <-time.After(5 * time.Second):
					t.Fatal("no grant message within 5s")
				}
				cancel()
				if a := <-got; !errors.Is(a.err, context.Canceled) {
					t.Fatalf("waiter: %v, want Canceled", a.err)
				}
				// Given back at once if Redis answers within the grace,
				// else in the background: either way long before the lease.
				assertFree(t, ctx, tg, lock, 5*time.Second)
			})
		}
	})
}

// A lock handed over lives in Redis only until the waiter's registration
// would have run out, which may be little of a lease. A renew=false holder
// claims it before Acquire returns, so it gets its full lease, and its
// context still ends before Redis's key does.
func TestHandedOverRenewFalseGetsFullLease(t *testing.T) {
	t.Parallel()
	forEachTarget(t, func(t *testing.T, tg target) {
		for _, kind := range exclusiveKinds {
			t.Run(kind.String(), func(t *testing.T) {
				observe, busy := busySignal()
				holder, waiter := tg.newLocker(t), tg.newLocker(t, runtime.WithObserver(observe))
				ctx := ctxTimeout(t, 10*time.Second)
				lock := runtime.Lock{Kind: kind, Key: "anchor", Lease: 3 * time.Second, NoRenew: true}
				h, err := holder.Acquire(ctx, lock)
				if err != nil {
					t.Fatal(err)
				}
				got := acquireAsync(ctx, waiter, lock)
				waitBusy(t, busy, 2)
				// The fault is time: the fair waiter's place ages (no
				// heartbeat before lease/3), so that unclaimed its lease
				// would count from 600ms ago; a mutex hand-over lives only
				// what is left of the 500ms window.
				time.Sleep(600 * time.Millisecond)
				if err := h.Release(); err != nil {
					t.Fatal(err)
				}
				a := <-got
				if a.err != nil {
					t.Fatal(a.err)
				}
				defer a.h.Release()
				end, ok := a.h.Context().Deadline()
				if !ok {
					t.Fatal("renew=false holder has no deadline")
				}
				v, err := tg.do(t, "PTTL", "@"+kind.String()+":{anchor}")
				if err != nil {
					t.Fatal(err)
				}
				pttl, _ := v.(int64)
				expires := time.Now().Add(time.Duration(pttl) * time.Millisecond)
				if pttl <= 0 || !end.Before(expires) {
					t.Errorf("holder's context ends at +%v, Redis's key at +%v (PTTL %d): the context must end first",
						time.Until(end).Round(time.Millisecond), time.Until(expires).Round(time.Millisecond), pttl)
				}
				if left := time.Until(end); left < lock.Lease-300*time.Millisecond {
					t.Errorf("renew=false holder's context ends %v after the hand-over, want about the lease %v", left.Round(time.Millisecond), lock.Lease)
				}
			})
		}
	})
}

// assertFree checks that nobody holds lock: a try-once acquire gets it,
// now (within 0) or before within has passed.
func assertFree(t *testing.T, ctx context.Context, tg target, lock runtime.Lock, within time.Duration) {
	t.Helper()
	lock.Wait = runtime.NoWait
	l := tg.newLocker(t)
	for deadline := time.Now().Add(within); ; time.Sleep(5 * time.Millisecond) {
		h, err := l.Acquire(ctx, lock)
		if err == nil {
			if err := h.Release(); err != nil {
				t.Fatal(err)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("lock not free: %v", err)
		}
	}
}

// stallHeartbeats makes every batch that carries a fair heartbeat wait
// until its context ends while stalled is set, and counts the batches that
// reach it.
type stallHeartbeats struct {
	*dropGrants
	stalled atomic.Bool
	batches atomic.Int64
}

func (s *stallHeartbeats) EvalBatch(ctx context.Context, calls []backend.Call) []backend.Reply {
	for _, c := range calls {
		if c.Script == lua.FairHeartbeat {
			s.batches.Add(1)
			if s.stalled.Load() {
				<-ctx.Done()
				out := make([]backend.Reply, len(calls))
				for i := range out {
					out[i].Err = ctx.Err()
				}
				return out
			}
			break
		}
	}
	return s.dropGrants.EvalBatch(ctx, calls)
}

// A fair waiter whose heartbeats failed until its place ran out (a stalled
// server, or a watchdog starved on a busy machine) goes on sending them at
// a pace, each with time to answer: the place is gone in Redis, or was
// handed the lock, and only a heartbeat that gets through can say so. A
// heartbeat due after its place ran out used to be sent with a deadline
// already past, fail at once and be retried at once, over and over, and
// the waiter never learnt that the release had handed it the lock.
func TestFairWaiterHeartbeatsAfterItsPlaceRanOut(t *testing.T) {
	t.Parallel()
	forEachTarget(t, func(t *testing.T, tg target) {
		ctx := ctxTimeout(t, 10*time.Second)
		lock := runtime.Lock{Kind: runtime.Fair, Key: "ranout", Lease: 600 * time.Millisecond}
		var stall *stallHeartbeats
		observe, busy := busySignal()
		waiter := tg.newLockerVia(t, func(b backend.Backend) backend.Backend {
			stall = &stallHeartbeats{dropGrants: newDropGrants(b)}
			stall.stalled.Store(true)
			return stall
		}, runtime.WithObserver(observe))
		h, err := tg.newLocker(t).Acquire(ctx, lock)
		if err != nil {
			t.Fatal(err)
		}
		got := acquireAsync(ctx, waiter, lock)
		waitBusy(t, busy, 2)
		registered := time.Now()
		// The place lives a lease from the last attempt; heartbeats stall
		// until well after it ran out.
		deadline := registered.Add(5 * time.Second)
		for stall.batches.Load() < 2 || time.Since(registered) < 2*lock.Lease {
			if time.Now().After(deadline) {
				t.Fatalf("%d heartbeat batches in 5s, want 2", stall.batches.Load())
			}
			time.Sleep(10 * time.Millisecond)
		}
		if err := h.Release(); err != nil { // hands the lock over, or finds the place gone
			t.Fatal(err)
		}
		before := stall.batches.Load()
		stall.stalled.Store(false)
		a := <-got
		if a.err != nil {
			t.Fatalf("waiter: %v (%d heartbeat batches since the release)", a.err, stall.batches.Load()-before)
		}
		defer a.h.Release()
		// Paced: about one per retry pause (20 ms doubling, at most
		// lease/10), not one per round trip.
		if n := stall.batches.Load() - before; n > 50 {
			t.Errorf("%d heartbeat batches between the release and the grant, want a few", n)
		}
	})
}
