package runtime

import (
	"fmt"

	"github.com/lockgen/lockgen/internal/family"
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
// "write" or "semaphore" (the family table's Name).
func (k Kind) String() string {
	if k.valid() {
		return families[k].Name
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

func (k Kind) valid() bool { return k >= Mutex && k <= Semaphore }

// exclusive reports whether two holders can never hold k on the same key at
// once. Only for these does the runtime guard against two goroutines that
// share one holder's context both re-entering (see reentry.go).
func (k Kind) exclusive() bool { return k == Mutex || k == Fair || k == Write }

// kindFamily is what the runtime knows of a kind: the shared family table's
// row (internal/family: its name, where its keys live; docs/design.md,
// "Keys"), and what only the runtime needs: which scripts it runs and how
// a busy acquire behaves.
type kindFamily struct {
	family.Kind
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

// families is indexed by Kind; row k is family.All[k-1] (TestKindTable).
var families = [...]kindFamily{
	Mutex: {family.Mutex,
		scriptSet{lua.MutexAcquire, lua.MutexRenew, lua.MutexRelease, nil, lua.MutexInspect, lua.MutexForce}, true, false},
	Fair: {family.Fair,
		scriptSet{lua.FairAcquire, lua.FairRenew, lua.FairRelease, lua.FairHeartbeat, lua.FairInspect, lua.FairForce}, true, false},
	Read: {family.Read,
		scriptSet{lua.ReadAcquire, lua.ReadRenew, lua.ReadRelease, nil, lua.RWInspect, lua.RWForce}, false, false},
	Write: {family.Write,
		scriptSet{lua.WriteAcquire, lua.WriteRenew, lua.WriteRelease, nil, lua.RWInspect, lua.RWForce}, true, false},
	Semaphore: {family.Semaphore,
		scriptSet{lua.SemaphoreAcquire, lua.SemaphoreRenew, lua.SemaphoreRelease, nil, lua.SemaphoreInspect, lua.SemaphoreForce}, false, true},
}

// family returns k's entry of the families table; k must be valid.
func (k Kind) family() *kindFamily { return &families[k] }

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
