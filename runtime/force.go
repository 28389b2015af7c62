package runtime

import (
	"context"
	"fmt"
)

// ForceRelease takes lk from whoever holds it, for operators (a holder
// that hangs, a process gone without its lease running out soon). "The
// lock" is all of it: a read/write lock loses its writer and every reader
// (Read and Write mean the same here), a semaphore every permit. Its
// waiters are woken as after a release (a fair lock goes to its first live
// waiter); a writer's claim on new readers stays. The fence floor stays in
// Redis for as long as the removed leases would have run, so the next
// grant's fence is higher than any the removed holders have. Each removed
// holder's watchdog learns at its next renewal (about lease/3) and cancels
// its context with ErrLockLost; until then it may still be running on the
// lock, which is what fencing protects against.
//
// It returns how many holds it removed (0: nobody held the lock). Only
// Kind and Key of lk matter. Errors: as Inspect.
func (l *Locker) ForceRelease(ctx context.Context, lk Lock) (int, error) {
	spec, err := l.resolveOp(lk)
	if err != nil {
		return 0, err
	}
	reply, err := l.backend.Eval(ctx, spec.call(spec.Kind.scripts().force, opsHolder, l.publish))
	if err != nil {
		return 0, fmt.Errorf("lockgen: force release %s: %w", &spec, err)
	}
	n, ok := reply.(int64)
	if !ok || n < 0 {
		return 0, fmt.Errorf("lockgen: force release %s: unexpected reply %#v", &spec, reply)
	}
	return int(n), nil
}
