package locktest

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/embedded"
	"github.com/lockgen/lockgen/luashim"
	"github.com/lockgen/lockgen/runtime"
)

// ErrInjected is the error FailAcquires makes acquires fail with when it is
// given none.
var ErrInjected = errors.New("locktest: injected failure")

// Locker is a runtime.Locker on an in-process server whose clock and
// faults the test controls. Pass l.Locker wherever a *runtime.Locker goes
// (a generated NewXxxLocked, for instance).
type Locker struct {
	*runtime.Locker

	srv    *luashim.Server
	clock  *serverClock
	raw    backend.Backend // the same server without faults, for thieves
	faults *faultBackend

	grants *grants // wakes WaitHeld

	mu      sync.Mutex
	thieves map[string]*runtime.Locker // by key prefix
	stolen  []*runtime.Held
}

// checkTimeout bounds the renewal a fault triggers: the shim answers in
// microseconds, so it only matters if the test has stalled the backend.
const checkTimeout = 5 * time.Second

// New returns a Locker on a fresh in-process server, with opts as for
// runtime.NewWithBackend. Close it at the end of the test.
func New(opts ...runtime.Option) *Locker {
	clock := &serverClock{}
	srv := luashim.New(clock)
	raw := embedded.NewBackend(srv)
	faults := &faultBackend{inner: raw}
	g := &grants{}
	opts = append(opts[:len(opts):len(opts)], runtime.WithObserver(g.observe))
	return &Locker{
		Locker:  runtime.NewWithBackend(faults, opts...),
		srv:     srv,
		clock:   clock,
		raw:     raw,
		faults:  faults,
		grants:  g,
		thieves: map[string]*runtime.Locker{},
	}
}

// Close lifts a stall, releases what Steal took and closes the Locker.
func (l *Locker) Close() error {
	l.faults.resumeAll()
	l.mu.Lock()
	stolen, thieves := l.stolen, l.thieves
	l.stolen, l.thieves = nil, map[string]*runtime.Locker{}
	l.mu.Unlock()
	var errs []error
	for _, h := range stolen {
		if err := h.Release(); err != nil && !errors.Is(err, runtime.ErrNotHeld) && !errors.Is(err, runtime.ErrLockLost) {
			errs = append(errs, err)
		}
	}
	for _, t := range thieves {
		errs = append(errs, t.Close())
	}
	return errors.Join(append(errs, l.Locker.Close())...)
}

// Server returns the in-process server the locks live on, to look at its
// keys or to keep other data in it: embedded.NewBackend(l.Server()) is a
// backend on the same server that no fault of l touches (for
// fencing.Set, say).
func (l *Locker) Server() *luashim.Server { return l.srv }

// Advance moves the server's clock forward by d: every lease, waiter
// registration and queue place that ends within d ends now. Then every
// lock l holds is renewed at once, so the holders of leases that ran out
// have their contexts cancelled with runtime.ErrLockLost before Advance
// returns. The machine's clock, and the Locker's local deadlines, do not
// move: only the server's view of time does.
func (l *Locker) Advance(d time.Duration) {
	l.clock.advance(d)
	l.check()
}

// check renews every held lock now, so that holders hear of a loss at
// once. While the backend is stalled it does nothing: a stalled Redis
// tells nobody anything; the resume function checks.
func (l *Locker) check() {
	if l.faults.isStalled() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
	defer cancel()
	_ = l.Locker.RenewNow(ctx) // ErrClosed: nothing left to tell
}

// Stall makes the backend hang: every call waits until resume is called or
// the call's context ends, as with a Redis server that stopped answering.
// Acquires with a wait give up at its end, renewals fail and are retried,
// and a holder's context is cancelled once its lease has passed on the
// machine's clock without a renewal. resume lets the calls go and renews
// every lock at once; calling it again does nothing. Close resumes too.
func (l *Locker) Stall() (resume func()) {
	release := l.faults.stall()
	return func() {
		release()
		l.check()
	}
}

// FailAcquires makes every acquire fail with err (ErrInjected if err is
// nil) until restore is called, as with a Redis server that refuses
// writes; renewals and releases still work. Acquire returns an error that
// wraps err.
func (l *Locker) FailAcquires(err error) (restore func()) {
	if err == nil {
		err = ErrInjected
	}
	l.faults.setAcquireFailure(err)
	return func() { l.faults.setAcquireFailure(nil) }
}
