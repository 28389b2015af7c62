// Package inspectwire reads the reply of the operator's inspect scripts
// (lua/prelude.lua, "Inspection and forced release"):
//
//	{ now_ms, last_fence, holders, waiters, claim }
//
// holders a flat list of <id, side, fence, lease deadline ms>, waiters of
// <id, deadline ms> in the order they are served, claim <writer, deadline
// ms> or empty. Deadlines are absolute server milliseconds; Decode turns
// each into what is left of it against now_ms, so that no caller compares
// a server clock with its own.
//
// It exists apart from package runtime so that the wire format is read and
// tested in one place, with no Redis: runtime's Locker.Inspect maps a Reply
// onto its public LockState. Decode accepts exactly the shapes the scripts
// send, a side only if it names a kind of the family table
// (internal/family), and anything else is an error naming the reply: a
// reply that does not fit is never half read.
package inspectwire

import (
	"fmt"
	"time"

	"github.com/lockgen/lockgen/internal/family"
)

// Reply is an inspect script's reply, read.
type Reply struct {
	LastFence int64    // the fence floor; 0 when the lock left nothing in Redis
	Holders   []Holder // in the scripts' order
	Waiters   []Waiter // in the order they are served
	Claim     *Waiter  // a read/write lock's waiting writer; nil if none
}

// Holder is one holder entry.
type Holder struct {
	ID    string
	Side  string // a family.Kind Name: "mutex", "read", ...
	Fence int64
	Left  time.Duration // until its lease ends; negative if it has by now
}

// Waiter is one waiter entry, or the claim.
type Waiter struct {
	ID   string
	Left time.Duration // until its place or registration ends
}

// Decode reads reply, as the backend returns it (integers as int64, strings
// as string, arrays as []any).
func Decode(reply any) (Reply, error) {
	bad := fmt.Errorf("unexpected inspect reply %#v", reply)
	a, ok := reply.([]any)
	if !ok || len(a) != 5 {
		return Reply{}, bad
	}
	now, ok1 := a[0].(int64)
	fence, ok2 := a[1].(int64)
	hs, ok3 := a[2].([]any)
	ws, ok4 := a[3].([]any)
	claim, ok5 := a[4].([]any)
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 {
		return Reply{}, bad
	}
	r := Reply{LastFence: fence}
	var err error
	if r.Holders, err = holders(hs, now); err != nil {
		return Reply{}, bad
	}
	if r.Waiters, err = waiters(ws, now); err != nil {
		return Reply{}, bad
	}
	cl, err := waiters(claim, now)
	if err != nil || len(cl) > 1 {
		return Reply{}, bad
	}
	if len(cl) == 1 {
		r.Claim = &cl[0]
	}
	return r, nil
}

// holders reads a flat list of <id, side, fence, deadline ms>.
func holders(flat []any, now int64) ([]Holder, error) {
	if len(flat)%4 != 0 {
		return nil, fmt.Errorf("holders: not a list of fours")
	}
	var out []Holder
	for i := 0; i < len(flat); i += 4 {
		id, ok1 := flat[i].(string)
		side, ok2 := flat[i+1].(string)
		f, ok3 := flat[i+2].(int64)
		until, ok4 := flat[i+3].(int64)
		_, ok5 := family.Named(side)
		if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 {
			return nil, fmt.Errorf("holders: bad entry")
		}
		out = append(out, Holder{ID: id, Side: side, Fence: f, Left: msBetween(now, until)})
	}
	return out, nil
}

// waiters reads a flat list of <id, deadline ms>.
func waiters(flat []any, now int64) ([]Waiter, error) {
	if len(flat)%2 != 0 {
		return nil, fmt.Errorf("waiters: odd list")
	}
	var out []Waiter
	for i := 0; i < len(flat); i += 2 {
		id, ok1 := flat[i].(string)
		until, ok2 := flat[i+1].(int64)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("waiters: bad entry")
		}
		out = append(out, Waiter{ID: id, Left: msBetween(now, until)})
	}
	return out, nil
}

func msBetween(now, until int64) time.Duration {
	return time.Duration(until-now) * time.Millisecond
}
