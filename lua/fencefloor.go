package lua

import "time"

// FenceFloor is how long every key that keeps a lock's last fence outlives
// what the lock needs it for (LG_FLOOR_MS in prelude.lua): past the end of
// the last lease, or past the release. A new grant on a master whose clock
// is at most this far behind the clock that issued the last fence still
// finds that fence and goes above it (docs/design.md, "Fences").
const FenceFloor = 10 * time.Second

// MutexOffer is how long a mutex release offers the lock to the first
// registered waiter (LG_OFFER_MS in prelude.lua; at most the lease): the
// runtime counts an offer it learnt from its own release reply held for
// that long from the release's send time.
const MutexOffer = 500 * time.Millisecond
