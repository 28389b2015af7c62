package runtime

import (
	"errors"

	"github.com/lockgen/lockgen/internal/callerr"
)

// Sentinel errors. Every error the runtime returns wraps one of these (or a
// Redis error, wrapped with the key it concerned), so callers test them with
// errors.Is.
var (
	// ErrNotAcquired: the lock was busy for the whole wait (or at the single
	// try of Wait: NoWait). Generated wrappers with onbusy=skip turn it into a
	// nil error without calling the method.
	ErrNotAcquired = errors.New("lockgen: lock not acquired")

	// ErrLockLost: a held lock was lost (renewal refused, or Redis unreachable
	// long enough that the lease may have run out). It is the cause of the
	// holder's cancelled context (context.Cause).
	ErrLockLost = errors.New("lockgen: lock lost")

	// ErrNotHeld: release or renewal of a lock that this holder does not hold
	// (already released, expired, or taken over).
	ErrNotHeld = errors.New("lockgen: lock not held")

	// ErrInvalidKey: a rendered key is empty, contains '{' or '}', or a
	// placeholder value could not be turned into text.
	ErrInvalidKey = errors.New("lockgen: invalid lock key")

	// ErrNoPermission: Redis refused a command for the ACL user the client
	// logs in as (a NOPERM error reply), in a script or outside one. It is
	// never retried: an acquire or release fails with it at once, a denied
	// renewal ends the hold at once (the holder's context is cancelled with
	// a cause wrapping ErrLockLost and ErrNoPermission, and EventLost
	// carries it in Err), and a denied SUBSCRIBE fails the waiting acquire
	// instead of leaving it to its retry timers. The error names the
	// command; docs/acl.md lists the commands each deployment needs.
	ErrNoPermission = callerr.ErrNoPermission
)

// Errors about how the runtime is used rather than about the state of a lock.
var (
	// ErrInvalidLock: a Lock is malformed (unknown kind, lease out of range,
	// permits missing on a semaphore or given on another kind), or a call
	// asks for something that can only wait for itself (upgrading a held
	// read lock to write).
	ErrInvalidLock = errors.New("lockgen: invalid lock")

	// ErrClosed: the Locker was closed. Acquire fails with it, waiting
	// acquires stop with it, and it is the cause (with ErrLockLost) of the
	// contexts of locks still held, since nothing renews them any more.
	ErrClosed = callerr.ErrClosed

	// ErrNotReplicated: with WithReplicas, fewer replicas than required
	// acknowledged the acquire before the timeout; the lock was given back.
	ErrNotReplicated = errors.New("lockgen: lock not acknowledged by enough replicas")
)
