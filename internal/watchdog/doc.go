// Package watchdog keeps held locks alive and fair waiters in their queues,
// with one goroutine for a whole Locker.
//
// Why it exists: a lock's lease in Redis must be renewed while its holder
// runs, and a fair waiter's place in its queue must be kept while it
// sleeps; a Locker may hold many thousands of both. One goroutine per
// lock would cost a goroutine and a round trip per lock and period; this
// package batches them instead, and is the one place that decides when a
// lock may be gone. The runtime registers each renewed lock (its renew
// call, its lease, a Key that joins the holders of one hold) with an Owner
// that learns of renewals and losses, and each heartbeat with callbacks
// for a place kept or lost. The package knows nothing else of locks.
//
// What it guarantees:
//
//   - The local deadline rule. Each lock has a local deadline: the moment
//     its last acknowledged renewal (or its acquire) was sent, plus the
//     lease, minus protocol.DriftMargin. Redis expires the key no earlier
//     than a lease after it received the command, which is after it was
//     sent, so when the deadline passes without a newer acknowledged
//     renewal the lock may be gone, and its Owner hears it lost (Expired)
//     before another client can have it (assuming the two clocks run at
//     rates within 1% of each other). Only an acknowledged renewal moves
//     the deadline, and only forward.
//   - Renewals about every lease/3. Each lock is renewed a third of a
//     lease after the last acknowledged renewal was sent; everything due
//     within the next lease/6 of the first thing due goes in the same
//     round, so that locks taken around the same time stay in step.
//   - Bounded rounds. A round is cut into batches of at most 1,000 calls
//     (MaxBatchCalls), most urgent first, each sent as one Config.Send
//     (one pipeline per node); at most 4 batches (MaxBatchesInFlight) are
//     in flight at once, each by a short-lived goroutine of its own and
//     bounded by a deadline of its own: half the time its most urgent
//     member has left, so that a batch stuck on a slow connection leaves
//     time for a retry and holds up no other batch.
//   - Paced retries. A renewal or heartbeat that failed is retried after a
//     pause of 20ms that doubles with each failure, never more than a tenth
//     of the lease nor a quarter of the time it has left.
//   - A renewal refused (the script says the lock is not held) or denied
//     (Config.Denied) ends the lock at once: retrying cannot help. Closing
//     (Stop) ends every lock too; Reason says which, the Owner words it.
//   - No callback runs under the watchdog's mutex, and the goroutine that
//     keeps the deadlines never waits on Redis: the senders do.
//
// Fair heartbeats (heartbeat.go) are kept two thirds of a lease after the
// request that last kept the place; each tells the script the place's new
// deadline on the server's clock, as a busy reply last said it, and asks
// for the queue's TTLs to be refreshed every 1.5 leases only.
package watchdog
