// Package fencing makes the storage a lock protects check the lock's
// fencing token, so that a holder that lost its lock without knowing it (a
// GC pause, a stalled VM, a partition longer than the lease) cannot
// overwrite what a newer holder wrote.
//
// Every lockgen grant carries a token, runtime.Fence(ctx), strictly
// increasing per lock key across holders. The lock alone cannot stop a
// paused process: it may wake up after its lease ran out and write, before
// it looks at its context. The storage can stop it, if every write carries
// the token and the storage refuses one older than the newest it has seen.
//
// For data in Redis, Set does that in one script call:
//
//	token, _ := runtime.Fence(ctx)
//	err := fencing.Set(ctx, locker.Backend(), "order:42:status", "shipped", token)
//	if errors.Is(err, fencing.ErrStaleFence) {
//		// we lost the lock and someone newer has written: give up
//	}
//
// For a SQL database, keep the token in a column of the row and make it part
// of the UPDATE's condition:
//
//	UPDATE orders SET status = $3, fence = $1 WHERE id = $2 AND fence <= $1
//
// and treat 0 rows affected as a stale write. examples/fencedsql runs this
// against SQLite. A write with the same token as the stored one is the same
// grant writing again, and goes through in both.
//
// The token must come from the lock that guards that data (one lock key per
// piece of data): tokens of different keys are not comparable.
package fencing
