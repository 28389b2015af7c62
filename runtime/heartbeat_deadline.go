package runtime

import (
	"strconv"
	"time"

	"github.com/lockgen/lockgen/backend"
)

// A fair waiter's heartbeat tells fair_heartbeat the new deadline of its
// place in server ms, so that the script's common path reads no TIME, and
// asks for the queue's TTLs to be refreshed only every few heartbeats
// (docs/design.md, "Fair heartbeats").

// refreshEvery is how long after the send of the last heartbeat that
// refreshed the queue's TTLs (to at least its deadline + 3 leases) the next
// one asks again. Until then every deadline sent, at most 1.5 leases
// later plus a lease, stays 1.5 leases short of the TTLs the refresh set:
// room for the estimate's error and for retries.
func refreshEvery(lease time.Duration) time.Duration { return lease * 3 / 2 }

// serverClock is the server's clock as a busy reply of fair_acquire said
// it: ms, its TIME when the script ran, and sent, when that call was sent
// (monotonic). The server time at a later local instant t is estimated as
// ms + (t - sent): late by at most the call's one-way delay, never early,
// whatever the local wall clock says (Go's monotonic reading is used).
type serverClock struct {
	ms   int64
	sent time.Time
}

// learnServerClock keeps the server clock of a busy reply sent at sent,
// the latest one: the monotonic and server clocks drift apart slowly, and
// the latest reading limits that. A reply that did not say (ms 0) changes
// nothing. d.mu must be held.
func (hb *heartbeat) learnServerClock(ms int64, sent time.Time) {
	if ms > 0 && !sent.Before(hb.clock.sent) {
		hb.clock = serverClock{ms: ms, sent: sent}
	}
}

// callAt is hb's heartbeat as sent at sent: the deadline of its place (a
// lease from sent on the server's clock, 0 if no reply said the server's
// clock yet: the script reads TIME then) and whether to refresh the TTLs.
// It notes the refresh asked, for applyHeartbeats. d.mu must be held.
func (hb *heartbeat) callAt(sent time.Time) backend.Call {
	deadline := int64(0)
	if hb.clock.ms > 0 {
		deadline = hb.clock.ms + (sent.Sub(hb.clock.sent) + hb.lease).Milliseconds()
	}
	hb.refreshing = hb.refreshed.IsZero() || sent.Sub(hb.refreshed) >= refreshEvery(hb.lease)
	refresh := "0"
	if hb.refreshing {
		refresh = "1"
	}
	args := append(hb.call.Args[:len(hb.call.Args):len(hb.call.Args)], strconv.FormatInt(deadline, 10), refresh)
	return backend.Call{Script: hb.call.Script, Keys: hb.call.Keys, Args: args}
}

// heartbeatCalls fills in the heartbeats of b, sent at sent, after its
// renewals.
func (d *watchdog) heartbeatCalls(b *batch, sent time.Time) {
	d.mu.Lock()
	for i, hb := range b.hbs {
		b.calls[len(b.rs)+i] = hb.callAt(sent)
	}
	d.mu.Unlock()
}
