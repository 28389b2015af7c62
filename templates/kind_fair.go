package templates

import "github.com/lockgen/lockgen/internal/family"

// fair: exclusive, reentrant, granted in arrival order. It needs no fields beyond the common ones.
func init() {
	registerKind(family.Fair, kindEmitter{})
}
