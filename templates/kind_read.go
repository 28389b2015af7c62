package templates

import "github.com/lockgen/lockgen/internal/family"

// read: the shared side of a read/write lock. It needs no fields beyond the common ones.
func init() {
	registerKind(family.Read, kindEmitter{})
}
