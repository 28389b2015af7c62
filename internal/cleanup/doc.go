// Package cleanup gives back, in the background, what a lock holder may
// still have in Redis after its caller has returned.
//
// Why it exists: every Redis call can time out, or end without its reply.
// An acquire whose outcome is unknown may have taken the lock or
// registered its holder id as a waiter; a release that got no reply may
// not have run. The caller has already returned, so nothing may stay held
// in its name. The runtime hands each such case to a Queue as a Request:
// the release to send (an idempotent script that also withdraws a waiter's
// registration; holder ids are never reused, so it cannot touch anyone
// else's hold), the Key naming the lock and holder, the lease, and a
// function to call when the clean-up ends. The package knows nothing else
// of locks.
//
// What it guarantees:
//
//   - It waits for the call in doubt. A Request carries the Pending of the
//     call whose outcome is unknown; no release goes out before that call
//     has returned, since until then it could still reach Redis after the
//     release. A call that certainly did not run (never sent, or refused
//     as a whole: DidNotRun) leaves nothing to give back, unless the
//     Request says the holder may hold something anyway.
//   - It confirms. If the call in doubt ended without a reply, a command of
//     it may have been read by Redis in the same pass as the first release
//     and run after it, so a second release, sent after the first one's
//     reply, confirms that nothing is left.
//   - It is bounded. A clean-up gives up once the lease would have ended
//     anyway (counted from when the call in doubt returned), and Close
//     lets those in flight finish for a short grace (at most the batch
//     timeout) and then abandons the rest, cancelling the batch on the
//     wire. Every clean-up that sends, gives up or is abandoned reports its
//     end once through the Request's Ended (one that finds nothing to give
//     back, or its lock held here again, ends silently).
//   - It does not storm. There is one clean-up per Key at a time (a second
//     Request for the same Key joins the first and starts it over), all run
//     by one goroutine that exists only while there is work, which sends
//     the releases that are due together, at most MaxBatch per round trip.
//     A failed release backs off (10ms doubling to 1s); while releases
//     cannot be sent at all (Redis unreachable), every clean-up pauses and
//     one release probes per pause, so an outage costs one attempt per
//     pause, not one per clean-up. A refusal (NOAUTH, WRONGPASS, NOPERM, or
//     what Config.Denied names) ends the clean-up: retrying cannot help.
//   - It does not undo a hold. A clean-up whose Key the runtime holds again
//     (Config.HeldLocally) ends without a release, since the hold's own
//     release gives it back; and Claim holds a clean-up back while an
//     acquisition under the same Key is under way, so that a failed
//     sibling's clean-up cannot give back what another is taking.
package cleanup
