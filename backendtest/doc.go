// Package backendtest is the conformance suite every lock backend runs (a
// package for tests, as net/http/httptest is): one set of scenarios, run
// against the embedded shim, go-redis on one server and on a Cluster,
// rueidis, and the quorum Locker, so that no backend passes a test of its
// own that the others would fail. A module with a Backend of its own
// imports it from its tests.
//
//	backendtest.Run(t, backendtest.Target{
//		NewLocker: func(t *testing.T, opts ...runtime.Option) *runtime.Locker {
//			return runtime.New(rdb, opts...)
//		},
//		Servers: []backend.Backend{goredisbackend.New(rdb)},
//	})
//
// Run checks, for every kind the target takes:
//
//   - Admits: an exclusive kind refuses a second holder, a semaphore admits
//     its permits and no more, readers share; the lock is free again after
//     its release, and a second Release is ErrNotHeld.
//   - MutualExclusion: goroutines of two Lockers never overlap (nor lose an
//     update of a counter they share), and each holder's fence is above the
//     one before.
//   - WakeUp: a waiter on another Locker gets the lock within seconds of
//     the release, though the lease is minutes long: a wake message, not
//     the lease running out, let it in.
//   - Reentry: a hold's context re-enters its lock with the same fence,
//     another call chain of the same Locker is refused, and the lock is
//     held until the outer hold is released too.
//   - Loss: a lock whose keys are deleted on every server cancels its
//     holder's context with ErrLockLost, Release says ErrNotHeld and
//     ErrLockLost, and another Locker can take the lock.
//   - Close: Close stops a waiter with ErrClosed and cancels the contexts of
//     held locks; those can still be released.
//
// After every scenario, the lock's keys hold nothing but what
// docs/design.md ("Key lifetime") says a released lock leaves for the fence
// floor: a mutex or fair key "! <fence> <waiters>", a read/write or
// semaphore hash with only its fence field "f", each with a TTL. Waiter
// registrations, queues, reader and permit sets must be gone.
//
// Timings are events, not sleeps: a waiter is known to sleep once the
// Locker's observer reported its second busy reply (the one after it
// subscribed), and the bounds are seconds where the work takes
// milliseconds, so that the suite holds on a busy machine.
package backendtest
