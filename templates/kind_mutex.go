package templates

import "github.com/lockgen/lockgen/internal/family"

// mutex: exclusive, reentrant. It needs no fields beyond the common ones.
func init() {
	registerKind(family.Mutex, kindEmitter{})
}
