package lua

import "time"

// FenceFloor is how long every key that keeps a lock's last fence outlives
// what the lock needs it for (LG_FLOOR_MS in prelude.lua): past the end of
// the last lease, or past the release. A new grant on a master whose clock
// is at most this far behind the clock that issued the last fence still
// finds that fence and goes above it (docs/design.md, "Fences").
const FenceFloor = 10 * time.Second

// MutexOffer is how long a mutex release offers the lock to the first
// registered waiter (LG_OFFER_MS in prelude.lua), whatever the releaser's
// lease: the runtime counts an offer held for that long (at most its own
// lease) from a moment before Redis made it, the send time of the first
// request that could register the waiter, or of the release whose reply
// told of the offer.
const MutexOffer = 500 * time.Millisecond
