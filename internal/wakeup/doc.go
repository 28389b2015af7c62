// Package wakeup is how a Locker's waiters sleep without polling Redis:
// it keeps, per wake channel, the line of this process's waiters on that
// lock, subscribes the channel on the backend's Pub/Sub, and turns each
// message into a wake-up of the waiters it concerns. It exists apart from
// package runtime so that the acquisition path reads as the lock protocol,
// and the bookkeeping of who is woken, and when a grant may be trusted,
// can be read and tested on its own, with no Redis and no timing. It
// imports backend and internal/protocol, never runtime.
//
// What it guarantees to the acquisition path:
//
// The line. Every waiter on a channel is in its Lines in the order it
// joined. Mutex waiters are "in line": only the first of them may attempt
// (its Turn is closed), the others wait until those ahead leave, so one
// process holds one registration per lock in Redis however many of its
// goroutines wait, and a goroutine that releases and asks again comes last
// behind its own process's waiters. A waiter that joins active (Redis has
// registered it already) or that is offered the lock gets its turn at once.
// Waiters of other kinds, and latch awaiters, are not in line and always
// have their turn. NextInLine and Registered let the first waiter's call
// register the one behind it (mutex_acquire's ARGV[5]), so that a grant
// costs no registration call per waiter.
//
// Wake-ups are never lost and rarely wasted. A Waiter's wake channel holds
// one pending wake-up; a message that cannot be read (unknown, malformed,
// or the server ending the subscription) wakes every waiter of the
// channel, since a spurious wake costs one attempt and a missed one a
// whole wait. "n:<N>" wakes N waiters that had no wake-up pending. A
// waiter that leaves without using its wake-up passes it on to the next
// waiter that has none, so a waiter giving up does not swallow a wake-up
// meant for the process.
//
// Grants. "grant:<fence>:<holder>" marks and wakes only the waiter with
// that holder id, once per fence, even when it hears the grant twice (from
// the reply of a release of this Locker, then from the message). TakeGrant
// hands the grant over once, with what makes it safe to act on:
//
//   - Grant.PlaceKept: the send time of the latest request that kept the
//     waiter's place; a grant lives in Redis at least until that place
//     would have run out.
//   - Grant.Lapsed: some request kept the place only after the previous
//     one's place may have lapsed. A grant message may then answer the
//     lapsed registration (published while the waiter was frozen or cut
//     off, and delivered late), so from then on every grant to the waiter
//     is only a hint, to be claimed with an attempt before it counts.
//   - Grant.ReleaseSent: set only for a grant learnt from the reply of a
//     release of this Locker, which dates it (Redis made the grant after
//     that release was sent). A grant message carries no date of its own
//     and may be late. While a release of this Locker on the lock is in
//     flight, a grant message is held back until the release's reply (or
//     its failure) so that the reply can date it.
//   - Grant.Since: the send time of the first request that could
//     register the waiter's holder id in Redis (Named): its own attempt,
//     or the call ahead of it that named it. Redis cannot have offered the
//     lock to that id before, so Since dates a mutex offer however late
//     its message comes.
//   - Rename: a waiter that goes on under a new holder id no longer owns
//     a grant to its old one.
//
// A mutex release names the first waiter of its own process (ReleaseStarts)
// for at most three hand-overs in a row, then lets the waiters of other
// processes have the lock. When an offer goes to another process's waiter
// and no "taken:<fence>" follows within the offer's lease (plus a margin),
// the first waiter here is woken to try: the offer lapsed.
//
// Subscriptions. A channel is subscribed the first time one of its waiters
// asks (Subscribe, bounded by the caller's context: the Subscribe itself
// runs in its own goroutine with a bound of its own), stays subscribed
// while it has waiters and for a linger after the last left, and is then
// unsubscribed; a later subscribe of the same channel waits for that
// unsubscribe to return, so the two never cross. Subscribed reports a
// live subscription only (none missed from now on); a subscription the
// server ends or that fails is no longer live, its waiters are woken, and
// the next Subscribe makes a new one. Denial tells a subscription Redis
// refused for the ACL user from one that Failed for any other reason. No
// mutex is held across a backend call. Close stops the linger sweep; the
// backend's Close ends the subscriptions.
package wakeup
