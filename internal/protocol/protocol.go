// Package protocol holds the rules of lockgen's exchange with its scripts
// that more than one package must read alike: the runtime's Locker and the
// quorum, which stands for a majority of servers behind the same Backend
// interface. Each rule is defined here once, so that the two cannot drift
// apart: the shape of an acquire and of a release reply, the wake messages
// the quorum passes on, and how much of a lease a client may count on.
//
// Only what two packages share belongs here; what one of them alone needs
// (the runtime's retry pacing, the quorum's fan-out) stays with it.
package protocol

import (
	"fmt"
	"strings"
	"time"
)

// The first element of an acquire script's reply.
const (
	AcquireBusy    = 0 // {0, wait_ms[, holder[, left_ms[, now_ms]]]}
	AcquireGranted = 1 // {1, fence}, or the bare fence
)

// Acquire is an acquire script's reply, read.
type Acquire struct {
	Flag int64 // AcquireGranted or AcquireBusy
	N    int64 // a grant's fence; a busy reply's wait (ms)

	// Holder is, for a busy reply that named one, the holder's id ("" when
	// the reply named none: readers, semaphore permits, a waiting writer);
	// HolderLeft is what was left of its lease (0: not said).
	Holder     string
	HolderLeft time.Duration
	// ServerNow is the server clock in ms when the script ran, for a busy
	// reply that says it (fair_acquire: its waiter's heartbeats compute the
	// deadlines of its place from it); 0 otherwise.
	ServerNow int64
}

// Granted reports whether the reply granted the lock.
func (a Acquire) Granted() bool { return a.Flag == AcquireGranted }

// ParseAcquire reads a grant, fence or {1, fence}, or a busy reply, {0,
// wait_ms[, holder[, left_ms[, now_ms]]]}. The exclusive scripts reply a grant as the
// bare fence: an integer reply costs Redis less than a table. Anything
// else is an error: no script sends it.
func ParseAcquire(reply any) (Acquire, error) {
	if fence, ok := reply.(int64); ok && fence > 0 {
		return Acquire{Flag: AcquireGranted, N: fence}, nil
	}
	arr, ok := reply.([]any)
	if ok && len(arr) >= 2 && len(arr) <= 5 {
		flag, ok1 := arr[0].(int64)
		n, ok2 := arr[1].(int64)
		if ok1 && ok2 && (flag == AcquireBusy || flag == AcquireGranted) && (flag == AcquireBusy || len(arr) == 2) {
			a := Acquire{Flag: flag, N: n}
			tail, nowOK := arr[2:], true
			if len(tail) == 3 {
				a.ServerNow, nowOK = tail[2].(int64)
				nowOK = nowOK && a.ServerNow > 0
				tail = tail[:2]
			}
			if a.Holder, a.HolderLeft, ok = parseBusyHolder(tail); ok && nowOK {
				return a, nil
			}
		}
	}
	return Acquire{}, fmt.Errorf("unexpected reply %#v", reply)
}

// parseBusyHolder reads the optional tail of a busy reply: nothing,
// {holder}, or {holder, left_ms}.
func parseBusyHolder(tail []any) (id string, left time.Duration, ok bool) {
	if len(tail) == 0 {
		return "", 0, true
	}
	id, ok = tail[0].(string)
	if !ok || id == "" {
		return "", 0, false
	}
	if len(tail) == 1 {
		return id, 0, true
	}
	ms, ok := tail[1].(int64)
	if !ok {
		return "", 0, false
	}
	ms = max(ms, 0) // a PTTL of -1: no TTL, which no script sets
	return id, time.Duration(ms) * time.Millisecond, true
}

// GrantPrefix opens the wake message of a release that handed the lock
// on to a registered waiter: "grant:<fence>:<holder>". It speaks for the
// server that sent it only.
const GrantPrefix = "grant:"

// WakeAll is the wake message that wakes every waiter on a channel.
const WakeAll = "all"

// ReleasedBy reports whether a release script's reply says that it
// released the caller's lock: 1, or the wake message of the grant that
// handed the lock on ("grant:<fence>:<holder>"), which it returns too.
func ReleasedBy(reply any) (grant string, ok bool) {
	switch v := reply.(type) {
	case int64:
		return "", v == 1
	case string:
		if strings.HasPrefix(v, GrantPrefix) {
			return v, true
		}
	}
	return "", false
}

// DriftMargin is how much earlier than the lease a client's local deadline
// falls: 1% for clock rate differences plus 2ms for timer slack. A lock
// counts as held until sent + lease - DriftMargin(lease), sent being when
// the call that took or renewed it was sent.
func DriftMargin(lease time.Duration) time.Duration { return lease/100 + 2*time.Millisecond }
