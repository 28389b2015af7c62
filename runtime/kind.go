package runtime

import (
	"fmt"

	"github.com/lockgen/lockgen/lua"
)

// Kind is a lock family, as named in a //lock:<kind> annotation.
type Kind uint8

const (
	// Mutex is an exclusive, reentrant lock (Redisson RLock).
	Mutex Kind = iota + 1
	// Fair is an exclusive, reentrant lock granted in arrival order
	// (Redisson FairLock). A waiter keeps its place while it waits and leaves
	// the queue when it gives up.
	Fair
	// Read is the shared side of the read/write lock on a key.
	Read
	// Write is the exclusive side of the read/write lock on a key. It is
	// reentrant, and its holder may also take the Read side.
	Write
	// Semaphore admits at most Lock.Permits holders of a key at once.
	Semaphore
)

// String returns the annotation spelling of k: "mutex", "fair", "read",
// "write" or "semaphore".
func (k Kind) String() string {
	switch k {
	case Mutex:
		return "mutex"
	case Fair:
		return "fair"
	case Read:
		return "read"
	case Write:
		return "write"
	case Semaphore:
		return "semaphore"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

func (k Kind) valid() bool { return k >= Mutex && k <= Semaphore }

// exclusive reports whether two holders can never hold k on the same key at
// once. Only for these does the runtime guard against two goroutines that
// share one holder's context both re-entering (see reentry.go).
func (k Kind) exclusive() bool { return k == Mutex || k == Fair || k == Write }

// family is what the runtime knows of a kind: where its keys live and which
// scripts it runs (docs/design.md, "Script protocol"). The scenario tests in
// gopherlua_test check the same names.
type family struct {
	// name is the middle part of the base key: read and write share "rw"
	// because they are two sides of one lock.
	name string
	// suffixes of the other KEYS, after the base key itself, in script
	// order; the last one is always the wake channel.
	suffixes []string
	scriptSet
	// registers: a busy acquire leaves the caller registered in Redis (a
	// fair queue place, a mutex waiter registration, a writer's claim on new
	// readers), so a caller that gives up runs the release script to
	// withdraw it.
	registers bool
	// nudges: a waiter that gets the lock wakes the next waiter of its
	// process, because the grant may not remember that others wait
	// (semaphore: wq goes with the hash once the semaphore is empty), and
	// without one more busy attempt the next release would publish nothing.
	nudges bool
}

// scriptSet is the scripts of one kind. release also withdraws what a busy
// acquire registered, and is the clean-up after an acquire whose outcome is
// unknown. heartbeat, where there is one, keeps a waiter registered while
// it waits (fair). inspect and force are the operator's (Locker.Inspect,
// Locker.ForceRelease); read and write share theirs, since they act on the
// whole lock.
type scriptSet struct {
	acquire, renew, release, heartbeat *lua.Script
	inspect, force                     *lua.Script
}

var families = [...]family{
	Mutex: {"mutex", []string{":waiters", ":wake"},
		scriptSet{lua.MutexAcquire, lua.MutexRenew, lua.MutexRelease, nil, lua.MutexInspect, lua.MutexForce}, true, false},
	Fair: {"fair", []string{":queue", ":alive", ":wake"},
		scriptSet{lua.FairAcquire, lua.FairRenew, lua.FairRelease, lua.FairHeartbeat, lua.FairInspect, lua.FairForce}, true, false},
	Read: {"rw", []string{":readers", ":wake"},
		scriptSet{lua.ReadAcquire, lua.ReadRenew, lua.ReadRelease, nil, lua.RWInspect, lua.RWForce}, false, false},
	Write: {"rw", []string{":readers", ":wake"},
		scriptSet{lua.WriteAcquire, lua.WriteRenew, lua.WriteRelease, nil, lua.RWInspect, lua.RWForce}, true, false},
	Semaphore: {"sem", []string{":holds", ":wake"},
		scriptSet{lua.SemaphoreAcquire, lua.SemaphoreRenew, lua.SemaphoreRelease, nil, lua.SemaphoreInspect, lua.SemaphoreForce}, false, true},
}

// family returns k's entry of the families table; k must be valid.
func (k Kind) family() *family { return &families[k] }

func (k Kind) scripts() scriptSet { return families[k].scriptSet }

// rank orders kinds on the same base key in the canonical acquisition order.
// Write comes before Read so that a call asking for both sides of one key
// takes the write side first and then the read side as the writer, instead
// of holding the read side and waiting for itself to let a writer in.
func (k Kind) rank() int {
	switch k {
	case Write:
		return 0
	case Read:
		return 1
	}
	return int(k) + 1
}
