package runtime

import (
	"errors"

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
