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

// nudgesNextWaiter reports whether a waiter that gets k must always wake the
// next waiter of its process (see wakeups.leave). Semaphore releases wake
// "n:<N>" waiters per process and a grant does not remember that others
// wait. A mutex grant to a caller that waited does (mutex_acquire's ARGV[4]),
// so a mutex nudges only when won without waiting (acquireOne); "all" wakes
// every waiter of a read/write lock, and fair locks hand the lock to their
// head.
func (k Kind) nudgesNextWaiter() bool { return k == Semaphore }

// family is the middle part of the base key (docs/design.md "Keys"): read
// and write share "rw" because they are two sides of one lock.
func (k Kind) family() string {
	switch k {
	case Mutex:
		return "mutex"
	case Fair:
		return "fair"
	case Read, Write:
		return "rw"
	case Semaphore:
		return "sem"
	}
	return ""
}

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

// scriptSet is the scripts of one kind. leave, where there is one, undoes
// what a busy acquire left behind for a waiter that gives up: a fair
// waiter's place in the queue, a mutex heir's claim on the next grant, a
// writer's hold on new readers; and gives back a lock handed to the waiter
// that it has not heard of yet.
type scriptSet struct {
	acquire, renew, release, leave *lua.Script
}

func (k Kind) scripts() scriptSet {
	switch k {
	case Mutex:
		return scriptSet{lua.MutexAcquire, lua.MutexRenew, lua.MutexRelease, lua.MutexLeave}
	case Fair:
		return scriptSet{lua.FairAcquire, lua.FairRenew, lua.FairRelease, lua.FairLeave}
	case Read:
		return scriptSet{lua.ReadAcquire, lua.ReadRenew, lua.ReadRelease, nil}
	case Write:
		return scriptSet{lua.WriteAcquire, lua.WriteRenew, lua.WriteRelease, lua.WriteLeave}
	case Semaphore:
		return scriptSet{lua.SemaphoreAcquire, lua.SemaphoreRenew, lua.SemaphoreRelease, nil}
	}
	return scriptSet{}
}

// keySuffixes lists, after the base key itself, the suffixes of the other
// KEYS of a family's scripts, in script order; the last one is always the
// wake channel.
func (k Kind) keySuffixes() []string {
	switch k {
	case Fair:
		return []string{":queue", ":alive", ":wake"}
	case Read, Write:
		return []string{":readers", ":wake"}
	case Semaphore:
		return []string{":holds", ":wake"}
	}
	return []string{":wake"}
}

func fairHeartbeatScript() *lua.Script { return lua.FairHeartbeat }
