package runtime

import (
	"strconv"
	"sync"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/lua"
)

// The holds in Redis (hold) and the Locker's registry of them (holds),
// which the Helds of a call chain share when they re-enter a lock (held.go,
// reentry.go).

// hold is one lock held in Redis by one holder id. Re-entries by the same
// call chain share it and are counted here, not in Redis: the scripts see
// one grant per holder id, so a retried or duplicated call can never add a
// hold, and the release script runs when the last of them is released.
type hold struct {
	key   holdKey
	fence int64
	// common is what every call of the family's scripts for key.holder
	// carries (KEYS, the head of ARGV); call adds the script.
	common backend.Call
	// release is the call of the family's release script: common's KEYS
	// and ARGV, then the fence of the grant, with which mutex_release
	// gives the lock back in one write (the other families' release
	// scripts ignore it). Its values live here (releaseArgs, releaseVals).
	release     backend.Call
	releaseArgs [4]string
	releaseVals [8]any
	refs        int // guarded by holds.mu
}

// call returns the call of script (the kind's renew) for the hold's
// holder.
func (h *hold) call(script *lua.Script) backend.Call {
	c := h.common
	c.Script = script
	return c
}

// initRelease makes h.release from h.common and h.fence. It costs the
// fence's digits and, where the backend takes boxed values, their box:
// the rest is shared with common.
func (h *hold) initRelease() {
	c := h.common
	vals, ok := c.Boxed() // before c's ARGV grows by the fence
	c.Script = h.key.kind.scripts().release
	fence := strconv.FormatInt(h.fence, 10)
	n := copy(h.releaseArgs[:], c.Args)
	h.releaseArgs[n] = fence
	c.Args = h.releaseArgs[: n+1 : n+1]
	if ok && len(vals) < len(h.releaseVals) {
		m := copy(h.releaseVals[:], vals)
		h.releaseVals[m] = fence
		vals = h.releaseVals[: m+1 : m+1]
	} else {
		vals = nil
	}
	h.release = c.WithBoxed(vals)
}

type holdKey struct {
	base   string
	kind   Kind
	holder string
}

// holds is the Locker's registry of the holds in Redis it holds.
type holds struct {
	mu sync.Mutex
	m  map[holdKey]*hold
}

func (hs *holds) init() { hs.m = map[holdKey]*hold{} }

// add records a new hold in the storage at h (the taker's heldLock's), or
// joins the one the key already has. acquire is the call that took it.
func (hs *holds) add(h *hold, key holdKey, fence int64, acquire backend.Call) *hold {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if old := hs.m[key]; old != nil {
		h = old
	} else {
		*h = hold{key: key, fence: fence, common: commonCall(acquire, nil)}
		h.initRelease()
		hs.m[key] = h
	}
	h.refs++
	return h
}

// has reports whether the lock of key is held.
func (hs *holds) has(key holdKey) bool {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return hs.m[key] != nil
}

// join adds a reference to the hold of key, if it is still held.
func (hs *holds) join(key holdKey) *hold {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	h := hs.m[key]
	if h != nil {
		h.refs++
	}
	return h
}

// drop removes a reference and reports whether it was the last one.
func (hs *holds) drop(h *hold) bool {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	h.refs--
	if h.refs > 0 {
		return false
	}
	if hs.m[h.key] == h {
		delete(hs.m, h.key)
	}
	return true
}
