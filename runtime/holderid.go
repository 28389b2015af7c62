package runtime

import (
	"fmt"

	"github.com/lockgen/lockgen/internal/holderid"
)

// Holder ids, default and checked, are internal/holderid's: the default
// ids are "<host>:<pid>:<random>:<n>", so that a person reading Inspect,
// `lockgen locks` or a busy error can find the holder's process.

// defaultHolderIDs is a Locker's source of ids unless WithHolderIDs.
func defaultHolderIDs() func() string { return holderid.Default() }

// checkHolderID enforces the script protocol's holder id alphabet, so that a
// bad WithHolderIDs source fails with ErrInvalidLock before Redis sees it.
func checkHolderID(id string) error {
	if err := holderid.Check(id); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidLock, err)
	}
	return nil
}
