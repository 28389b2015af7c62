// Package locktest lets a unit test make a lock go away under the code that
// holds it, and see what that code does, in milliseconds.
//
// Code that takes a lock must cope with losing it: its context is cancelled
// with runtime.ErrLockLost, and its writes should carry the fencing token
// (package fencing). Testing that path against a real Redis means waiting
// out leases; with locktest it is a call:
//
//	l := locktest.New()
//	defer l.Close()
//	svc := orders.NewOrderServiceLocked(&orders.OrderService{}, l.Locker)
//	...
//	l.Expire(runtime.Lock{Kind: runtime.Mutex, Key: "order:42"}) // the holder's ctx is cancelled now
//
// A Locker is a runtime.Locker on the embedded backend (the lock scripts
// run in process on luashim) with:
//
//   - Expire(lock): the lock ends for its holders, as if its lease had run
//     out; they are told before Expire returns.
//   - Steal(lock): another holder takes it, with a higher fence, as when a
//     paused holder was overtaken.
//   - Advance(d): the server's clock jumps; every lease that ends within d
//     ends, and its holders are told.
//   - Stall(): every call hangs until resumed, as with a frozen server.
//   - FailAcquires(err): every acquire fails with err.
//   - WaitHeld(ctx, lock): waits until the lock has a holder, for a test
//     whose code under test takes it on another goroutine; then Expire or
//     Steal it.
//
// "Told" means the Locker renews its locks at once (runtime.Locker.RenewNow)
// instead of at its next lease/3, and finds them gone. Only the server's
// clock moves: the Locker's own local deadlines follow the machine's clock,
// so a Stall costs a lease of real time before the holder gives up by
// itself (resume tells it at once).
package locktest
