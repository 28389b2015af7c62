package runtime

import "errors"

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
)
