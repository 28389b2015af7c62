package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/lua"
	"github.com/lockgen/lockgen/runtime"
)

// batchGate holds back the watchdog's batches (renewals, and the claim of
// an offer counted held before it was claimed) while closed, and counts
// the acquire attempts made while it is.
type batchGate struct {
	backend.Backend

	mu     sync.Mutex
	closed chan struct{} // nil while open; closed by open
	calls  int           // acquire calls made while the gate was closed
	held   chan struct{} // a batch is waiting at the gate
	log    []string      // "batch done" and "release sent", in order
	// deaf: a closed gate holds a batch until it opens, whatever the
	// batch's context says (a reply that never arrives in time).
	deaf bool
	// passed, if not nil, is signalled when a batch held at the gate has
	// been sent and replied to.
	passed chan struct{}
	// released is when the test let go of the first holder's lock, just
	// before its release was sent.
	released time.Time
	// otherReleaser: gatedHandOver takes the first lock with a Locker of
	// its own (another process), whose release offers the lock by the
	// wake message only. waiterStarted is when the waiter's Acquire began.
	otherReleaser bool
	waiterStarted time.Time
}

func (g *batchGate) note(what string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.log = append(g.log, what)
}

func (g *batchGate) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed, g.calls = make(chan struct{}), 0
}

// open lets the batches go and returns how many acquire calls went out
// while it was closed.
func (g *batchGate) open() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	close(g.closed)
	g.closed = nil
	return g.calls
}

func (g *batchGate) Eval(ctx context.Context, c backend.Call) (any, error) {
	g.mu.Lock()
	if g.closed != nil && c.Script == lua.MutexAcquire {
		g.calls++
	}
	if c.Script == lua.MutexRelease {
		g.log = append(g.log, "release sent")
	}
	g.mu.Unlock()
	return g.Backend.Eval(ctx, c)
}

func (g *batchGate) EvalBatch(ctx context.Context, calls []backend.Call) []backend.Reply {
	g.mu.Lock()
	closed, deaf := g.closed, g.deaf
	g.mu.Unlock()
	if closed != nil {
		select {
		case g.held <- struct{}{}:
		default:
		}
		done := ctx.Done()
		if deaf {
			done = nil
		}
		select {
		case <-closed:
		case <-done:
		}
	}
	replies := g.Backend.EvalBatch(ctx, calls)
	g.note("batch done")
	if closed != nil && g.passed != nil {
		select {
		case g.passed <- struct{}{}:
		default:
		}
	}
	return replies
}

// gatedHandOver has a waiter of one Locker wait behind a holder of the
// same Locker (or of another, with gate.otherReleaser), closes the gate
// and releases: the release's reply (or its message) offers the lock to
// the waiter. It returns the waiter's hold, acquired while the gate held
// its claim back, and the first holder's fence. gate, if not nil, is the
// gate to use (its held channel is made here); opts go to the Locker.
func gatedHandOver(t *testing.T, ctx context.Context, tg target, lock runtime.Lock, gate *batchGate, opts ...runtime.Option) (*runtime.Held, *batchGate, int64) {
	t.Helper()
	if gate == nil {
		gate = &batchGate{}
	}
	gate.held = make(chan struct{}, 1)
	observe, busy := busySignal()
	l := tg.newLockerVia(t, func(b backend.Backend) backend.Backend {
		gate.Backend = b
		return gate
	}, append([]runtime.Option{runtime.WithObserver(observe)}, opts...)...)
	releaser := l
	if gate.otherReleaser {
		releaser = tg.newLocker(t)
	}
	first, err := releaser.Acquire(ctx, lock)
	if err != nil {
		t.Fatal(err)
	}
	firstFence, _ := runtime.Fence(first.Context())
	gate.waiterStarted = time.Now() // its first request goes out after this
	got := acquireAsync(ctx, l, lock)
	waitBusy(t, busy, 2) // registered, and subscribed

	gate.close()
	gate.released = time.Now()
	if err := first.Release(); err != nil {
		t.Fatal(err) // offers the lock to the waiter, and says so in its reply
	}
	var a acquired
	select {
	case a = <-got:
	case <-time.After(5 * time.Second):
		gate.open()
		t.Fatalf("the waiter offered the lock by a release (another Locker's: %v) did not return within 5s while its claim was held back", gate.otherReleaser)
	}
	if a.err != nil {
		gate.open()
		t.Fatal(a.err)
	}
	return a.h, gate, firstFence
}

// A waiter offered the lock by a release of its own Locker counts it held
// from the release's reply: it returns before its claim reaches Redis,
// and makes no acquire call for it. The claim then goes as its first
// renewal, and gives it the full lease: it holds the lock past the
// offer's 500 ms.
func TestOwnReleaseOfferIsHeldBeforeItsClaim(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		playInTime(t, "own-offer", func(lock runtime.Lock) bool {
			ctx := ctxTimeout(t, 30*time.Second)
			h, gate, firstFence := gatedHandOver(t, ctx, tg, lock, nil)
			defer h.Release()
			awaitClosedOrSignal(t, gate.held, "the claim")
			margin := offerMargin(gate)
			if n := gate.open(); n != 0 {
				t.Errorf("the waiter made %d acquire calls between the release and its return; want none (the release's reply is the grant)", n)
			}
			if fence, _ := runtime.Fence(h.Context()); fence != firstFence+1 {
				t.Errorf("fence %d, want the offer's %d", fence, firstFence+1)
			}
			return claimKeptTheLock(t, ctx, tg, lock, h, margin)
		})
	})
}

// claimKeptTheLock checks a hold counted held on an offer whose claim was
// let go margin before the offer's local deadline: past the offer's
// lease the lock is still the holder's (the claim gave it the full lease),
// another Locker is refused, and it releases cleanly. It reports false
// (nothing told) if the hold ended and the claim went out too late to say
// why.
func claimKeptTheLock(t *testing.T, ctx context.Context, tg target, lock runtime.Lock, h *runtime.Held, margin time.Duration) (told bool) {
	t.Helper()
	time.Sleep(800 * time.Millisecond) // past the offer's 500 ms
	if err := context.Cause(h.Context()); err != nil && margin < inTime {
		t.Logf("the gate opened %v before the offer's deadline, and the hold ended: %v; trying again", margin, err)
		return false
	} else if err != nil {
		t.Fatalf("the hold ended after the offer's lease: %v", err)
	}
	tryOnce := lock
	tryOnce.Wait = runtime.NoWait
	if o, err := tg.newLocker(t).Acquire(ctx, tryOnce); err == nil {
		o.Release()
		t.Fatal("another Locker took the lock past the offer's lease: the claim did not extend it")
	} else if !errors.Is(err, runtime.ErrNotAcquired) {
		t.Fatal(err)
	}
	if err := h.Release(); err != nil {
		t.Errorf("release after the claim: %v", err)
	}
	return true
}

// The lock is taken from a waiter counted held on its own release's
// offer before its claim reaches Redis (forced away, and taken by another
// process). The claim, a renewal, is refused: the waiter hears of a loss
// as soon as the refusal comes back, told as a refusal (its context ends
// with ErrLockLost), not at the offer's local deadline, which a claim
// that failed or went unanswered reaches too; and the claim never takes
// the lock back from the other holder.
//
// A run tells the two apart only if the gate opened well before that
// deadline (the forced take-over took two round trips): a run where it
// did not is tried again, 5 times at most.
func TestOwnReleaseOfferWhoseClaimFailsIsLost(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		playInTime(t, "own-offer-lost", func(lock runtime.Lock) bool { return refusedClaimIsLost(t, tg, lock) })
	})
}

// refusedClaimIsLost plays one run of TestOwnReleaseOfferWhoseClaimFailsIsLost
// and reports whether it could tell a refusal from the deadline.
func refusedClaimIsLost(t *testing.T, tg target, lock runtime.Lock) (told bool) {
	ctx := ctxTimeout(t, 30*time.Second)
	other := tg.newLocker(t)
	h, gate, _ := gatedHandOver(t, ctx, tg, lock, nil)
	awaitClosedOrSignal(t, gate.held, "the claim")
	if _, err := other.ForceRelease(ctx, lock); err != nil {
		gate.open()
		t.Fatal(err)
	}
	second, err := other.Acquire(ctx, lock)
	if err != nil {
		gate.open()
		t.Fatal(err)
	}
	defer second.Release()
	margin := offerMargin(gate)
	gate.open()

	select {
	case <-h.Context().Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the waiter whose claim was refused still believes it holds the lock 5s later")
	}
	cause := context.Cause(h.Context())
	if !errors.Is(cause, runtime.ErrLockLost) {
		t.Errorf("cause %v, want ErrLockLost", cause)
	}
	refused := cause != nil && strings.Contains(cause.Error(), "refused")
	if !refused && margin < inTime {
		t.Logf("the gate opened %v before the offer's deadline, and the loss came with it: %v; trying again", margin, cause)
		h.Release()
		return false
	}
	if !refused {
		t.Errorf("loss %q though the claim went out %v before the offer's deadline: want the refusal told", cause, margin)
	}
	if err := h.Release(); !errors.Is(err, runtime.ErrNotHeld) {
		t.Errorf("release of the lost hold: %v, want ErrNotHeld", err)
	}
	if err := second.Release(); err != nil {
		t.Errorf("the other holder's release: %v (the refused claim must leave its lock alone)", err)
	}
	return true
}

// A holder counted held on its own release's offer that releases before
// its claim went out waits for the claim: a release that overtook it
// would have the claim refused, and the next waiter that the claim
// registers would wait for an offer that never comes.
func TestReleaseWaitsForItsPendingClaim(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		playInTime(t, "own-offer-release", func(lock runtime.Lock) bool {
			ctx := ctxTimeout(t, 30*time.Second)
			h, gate, _ := gatedHandOver(t, ctx, tg, lock, nil)
			awaitClosedOrSignal(t, gate.held, "the claim")
			gate.mu.Lock()
			gate.log = nil
			gate.mu.Unlock()
			released := make(chan error, 1)
			go func() { released <- h.Release() }()
			margin := offerMargin(gate)
			gate.open()
			select {
			case err := <-released:
				if err != nil && errors.Is(err, runtime.ErrLockLost) && margin < inTime {
					t.Logf("the gate opened %v before the offer's deadline, and the hold was lost: %v; trying again", margin, err)
					return false
				}
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Release did not return within 5s of the claim going out")
			}
			gate.mu.Lock()
			log := append([]string(nil), gate.log...)
			gate.mu.Unlock()
			if len(log) < 2 || log[0] != "batch done" || log[1] != "release sent" {
				t.Errorf("calls in the order %q; want the claim's batch done before the release was sent", log)
			}
			return true
		})
	})
}

// inTime is how long before the offer's local deadline a test must let
// the claim go for its outcome to tell anything: the claim's batch may
// take up to half the time left (the watchdog's bound), and a round trip.
const inTime = 250 * time.Millisecond

// offerMargin is how long the hold taken by gatedHandOver has left before
// its local deadline at the latest: the offer's lease, less the drift
// margin, from before the release that offered it was sent.
func offerMargin(gate *batchGate) time.Duration {
	return time.Until(gate.released.Add(lua.MutexOffer - lua.MutexOffer/100 - 2*time.Millisecond))
}

// playInTime plays run on a fresh lock named after key, up to 5 times
// while run reports that it could not tell anything: its gate opened less
// than inTime before the offer's deadline (a slow machine).
func playInTime(t *testing.T, key string, run func(lock runtime.Lock) bool) {
	t.Helper()
	for i := range 5 {
		lock := runtime.Lock{Kind: runtime.Mutex, Key: fmt.Sprintf("%s-%d", key, i), Lease: 10 * time.Second}
		if run(lock) {
			return
		}
	}
	t.Fatalf("in 5 runs the gate never opened %v before the offer's local deadline: nothing could be told", inTime)
}

// A claim whose reply does not come (its batch hangs, whatever its
// context says) holds a Release up for half the release timeout at most:
// the release then goes out, and the lock is free when Release returns,
// while the claim still hangs. The claim, when it runs at last, is
// refused and leaves the next holder's lock alone. (Release used to wait
// until the watchdog gave the hold up at the offer's local deadline,
// about 500 ms after the offer, past a release timeout of 400 ms, and
// then returned ErrNotHeld and left the lock to a clean-up.)
func TestReleaseWaitsForItsClaimWithinTheReleaseTimeout(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		const releaseTimeout = 400 * time.Millisecond
		lock := runtime.Lock{Kind: runtime.Mutex, Key: "own-offer-hung-claim", Lease: 10 * time.Second}
		ctx := ctxTimeout(t, 30*time.Second)
		other := tg.newLocker(t)
		gate := &batchGate{deaf: true, passed: make(chan struct{}, 1)}
		h, _, _ := gatedHandOver(t, ctx, tg, lock, gate, runtime.WithReleaseTimeout(releaseTimeout))
		awaitClosedOrSignal(t, gate.held, "the claim")

		start := time.Now()
		err := h.Release()
		took := time.Since(start)
		t.Logf("Release took %v with the claim hung and a release timeout of %v", took, releaseTimeout)
		if err != nil {
			t.Errorf("Release while its claim hangs: %v (after %v); want the lock given back within the release timeout", err, took)
		}
		tryOnce := lock
		tryOnce.Wait = runtime.NoWait
		second, err := other.Acquire(ctx, tryOnce)
		if err != nil {
			gate.open()
			t.Fatalf("another Locker, once Release returned: %v; want the lock free", err)
		}
		gate.open()
		awaitClosedOrSignal(t, gate.passed, "the hung claim's reply")
		if err := second.Release(); err != nil {
			t.Errorf("the next holder's release after the late claim ran: %v", err)
		}
	})
}

// A Release that gives up on its hung claim (at half its release timeout)
// releases while the claim, which was to register the next waiter of its
// process in Redis, has not run. The release finds that waiter
// unregistered and offers the lock to another process's registered
// waiter, which publishes no "all". The next waiter is woken to try on
// its own: within seconds it is registered in Redis (or holds the lock).
// Left asleep, it would wait on a registration that does not exist until
// the other process's waiters were all served or its 30 s lease ran out.
func TestAbandonedClaimWakesTheWaiterItWasToRegister(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		lock := runtime.Lock{Kind: runtime.Mutex, Key: "abandoned-claim", Lease: 30 * time.Second}
		ctx := ctxTimeout(t, 60*time.Second)
		gate := &batchGate{deaf: true, held: make(chan struct{}, 1)}
		observe, busy := busySignal()
		a := tg.newLockerVia(t, func(b backend.Backend) backend.Backend {
			gate.Backend = b
			return gate
		}, runtime.WithObserver(observe), runtime.WithReleaseTimeout(400*time.Millisecond), holderIDs("a"))
		first, err := a.Acquire(ctx, lock) // a:1
		if err != nil {
			t.Fatal(err)
		}
		nearGot := acquireAsync(ctx, a, lock) // a:2
		waitBusy(t, busy, 2)
		nextGot := acquireAsync(ctx, a, lock) // a:3, queued in the process
		awaitInLine(t, a, 2)
		observeB, busyB := busySignal()
		otherGot := acquireAsync(ctx, tg.newLocker(t, runtime.WithObserver(observeB), holderIDs("b")), lock)
		waitBusy(t, busyB, 2)

		gate.close()
		if err := first.Release(); err != nil {
			t.Fatal(err) // offers the lock to a:2, whose claim is to register a:3
		}
		near := <-nearGot
		if near.err != nil {
			gate.open()
			t.Fatal(near.err)
		}
		awaitClosedOrSignal(t, gate.held, "the claim")
		if err := near.h.Release(); err != nil {
			t.Errorf("release with the claim hung: %v", err)
		}

		registered := awaitRegisteredOrHolding(ctx, a, lock, "a:3")
		gate.open()
		if !registered {
			t.Error("a:3, which the abandoned claim was to register, neither holds the lock nor is registered in Redis 5s after the release")
		}
		releaseGranted(t, nextGot, otherGot)
	})
}

// awaitRegisteredOrHolding reports whether id holds lock or is among its
// registered waiters in Redis within 5s.
func awaitRegisteredOrHolding(ctx context.Context, l *runtime.Locker, lock runtime.Lock, id string) bool {
	end := time.Now().Add(5 * time.Second)
	for time.Now().Before(end) {
		st, err := l.Inspect(ctx, lock)
		if err == nil {
			for _, h := range st.Holders {
				if h.ID == id {
					return true
				}
			}
			for _, w := range st.Waiters {
				if w.ID == id {
					return true
				}
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	return false
}

// releaseGranted waits for the acquires of x and y (nil: none), in
// whichever order they are granted, and releases each as it comes.
func releaseGranted(t *testing.T, x, y <-chan acquired) {
	t.Helper()
	n := 0
	for _, c := range []<-chan acquired{x, y} {
		if c != nil {
			n++
		}
	}
	for range n {
		var a acquired
		select {
		case a = <-x:
			x = nil
		case a = <-y:
			y = nil
		case <-time.After(10 * time.Second):
			t.Fatal("a waiter got no lock within 10s of the one before")
		}
		if a.err != nil {
			t.Fatal(a.err)
		}
		a.h.Release()
	}
}
