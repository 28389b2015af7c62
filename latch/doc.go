// Package latch is a distributed CountDownLatch on a runtime.Locker: one
// party sets a count, parties count it down, and every awaiter, in every
// process, returns once the count is zero.
//
//	drained := latch.New(l, "drained:run-7")
//	ok, err := drained.TrySetCount(ctx, 3)    // once, before anyone awaits
//	left, err := drained.CountDownAs(ctx, "shard-2")
//	err = drained.Await(ctx)                  // in any process
//
// # What it guarantees
//
// A latch is set once and opens once: TrySetCount writes only a latch that
// does not exist, and an open latch stays open until it expires, so a
// count-down delayed in the network cannot count in a later round (a new
// round takes a new key). A named party (CountDownAs) counts once however
// often it is retried. The last count-down publishes one message that wakes
// every awaiter of every process; an awaiter also checks Redis after
// subscribing and at least every min(TTL/3, 5s), so a lost message delays
// it but never strands it. Every operation restarts the latch's TTL
// (WithTTL, default 1h): a latch lives while anyone uses it, awaiters
// included, and one nobody uses for a whole TTL leaves no key behind.
//
// Each operation is one script call, bounded by its context even when the
// client is not. The Redis keys are the Locker's prefix + "latch:{key}" and
// its ":wake" channel, in one Cluster slot.
package latch
