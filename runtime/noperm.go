package runtime

import (
	"errors"
	"fmt"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/internal/callerr"
)

// withPermissionErrors names ACL denials on the way out of every call of b
// (callerr.WithPermissionErrors): ErrNoPermission, naming the command.
func withPermissionErrors(b backend.Backend) backend.Backend {
	return callerr.WithPermissionErrors(b)
}

// permissionDenied reports whether err is a denial named by
// callerr.NamePermissionError.
func permissionDenied(err error) bool {
	return errors.Is(err, ErrNoPermission)
}

// lostCause is the cause a renewal's end gives its holders: the NOPERM
// that refused it, or the lock being no longer held.
func lostCause(r *renewal) error {
	if r.denied != nil {
		return fmt.Errorf("%w: %s: renewal denied: %w", ErrLockLost, r.spec, r.denied)
	}
	return fmt.Errorf("%w: %s: renewal refused, the lock is no longer held", ErrLockLost, r.spec)
}
