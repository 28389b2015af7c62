package watchdog

import (
	"strconv"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/internal/callbound"
)

// Heartbeat keeps a fair waiter's place in the queue while it waits. The
// owner sets the exported fields before AddHeartbeat and leaves them.
type Heartbeat struct {
	// Call is the heartbeat script's call without its last two ARGV, the
	// place's deadline and the refresh flag, which each send adds (callAt).
	Call    backend.Call
	Lease   time.Duration
	Kept    func(sent time.Time) // called when a heartbeat sent at sent kept the place
	Evicted func()               // called when the script says the waiter is not queued

	due     time.Time
	sending bool
	// placeUntil is when the place runs out unless kept again: a lease
	// after the last request that kept it was sent.
	placeUntil time.Time
	failures   int // failed attempts since the last success

	clock      serverClock // the server's clock, for the deadlines sent
	refreshed  time.Time   // when the last heartbeat that refreshed the TTLs and got a reply was sent
	refreshing bool        // the heartbeat in flight asks for a refresh
}

// answerBy is when a heartbeat sent at now must have its reply: before
// the place runs out, or, once it has (its heartbeats failed, or the
// watchdog ran late), within a third of a lease. Such a heartbeat still
// goes out: the place is gone in Redis, or a release handed the waiter the
// lock, and only a heartbeat that gets through tells the waiter (its reply
// 0 wakes it). A deadline already past would fail each one at once, and
// the retry at once, without end.
func (hb *Heartbeat) answerBy(now time.Time) time.Time {
	return callbound.Latest(hb.placeUntil, now.Add(hb.Lease/3))
}

// heartbeatEvery is how long after the request that last kept a fair
// waiter's place the next heartbeat is due: two thirds of a lease. The
// place lives a lease (so a waiter that died is gone within one), which
// leaves a third of it for retries after a failed heartbeat; and a waiter
// costs Redis one heartbeat per 2/3 lease instead of one per lease/3.
func heartbeatEvery(lease time.Duration) time.Duration { return lease * 2 / 3 }

// AddHeartbeat starts keeping hb's place, kept last by a request sent at
// sent, whose reply said the server clock was serverMs (0: it did not).
func (d *Watchdog) AddHeartbeat(hb *Heartbeat, sent time.Time, serverMs int64) {
	d.mu.Lock()
	hb.learnServerClock(serverMs, sent)
	hb.due = sent.Add(heartbeatEvery(hb.Lease))
	hb.placeUntil = sent.Add(hb.Lease)
	d.beats[hb] = struct{}{}
	d.wakeBefore(hb.due)
	d.mu.Unlock()
}

// TouchHeartbeat postpones hb: an acquire attempt sent at sent renewed the
// waiter's place as a heartbeat would have.
func (d *Watchdog) TouchHeartbeat(hb *Heartbeat, sent time.Time, serverMs int64) {
	d.mu.Lock()
	hb.learnServerClock(serverMs, sent)
	hb.due = sent.Add(heartbeatEvery(hb.Lease))
	hb.placeUntil = callbound.Latest(hb.placeUntil, sent.Add(hb.Lease))
	d.mu.Unlock()
}

// RemoveHeartbeat stops sending hb; a reply still in flight is ignored.
func (d *Watchdog) RemoveHeartbeat(hb *Heartbeat) {
	d.mu.Lock()
	delete(d.beats, hb)
	d.mu.Unlock()
}

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
func (hb *Heartbeat) learnServerClock(ms int64, sent time.Time) {
	if ms > 0 && !sent.Before(hb.clock.sent) {
		hb.clock = serverClock{ms: ms, sent: sent}
	}
}

// callAt is hb's heartbeat as sent at sent: the deadline of its place (a
// lease from sent on the server's clock, 0 if no reply said the server's
// clock yet: the script reads TIME then) and whether to refresh the TTLs.
// It notes the refresh asked, for applyHeartbeats. d.mu must be held.
func (hb *Heartbeat) callAt(sent time.Time) backend.Call {
	deadline := int64(0)
	if hb.clock.ms > 0 {
		deadline = hb.clock.ms + (sent.Sub(hb.clock.sent) + hb.Lease).Milliseconds()
	}
	hb.refreshing = hb.refreshed.IsZero() || sent.Sub(hb.refreshed) >= refreshEvery(hb.Lease)
	refresh := "0"
	if hb.refreshing {
		refresh = "1"
	}
	args := append(hb.Call.Args[:len(hb.Call.Args):len(hb.Call.Args)], strconv.FormatInt(deadline, 10), refresh)
	return backend.Call{Script: hb.Call.Script, Keys: hb.Call.Keys, Args: args}
}

// heartbeatCalls fills in the heartbeats of b, sent at sent, after its
// renewals.
func (d *Watchdog) heartbeatCalls(b *batch, sent time.Time) {
	d.mu.Lock()
	for i, hb := range b.hbs {
		b.calls[len(b.rs)+i] = hb.callAt(sent)
	}
	d.mu.Unlock()
}
