package templates

import (
	"github.com/dave/jennifer/jen"
	"github.com/lockgen/lockgen/internal/family"
)

// kindEmitter fills in the kind-specific part of a runtime.Lock literal.
type kindEmitter struct {
	// runtimeConst is the runtime.Kind constant, e.g. "Mutex" (the family
	// table's Const, filled in by registerKind).
	runtimeConst string
	// extraFields returns `Name: value` elements for fields beyond Kind, Key, Lease, NoRenew and Wait,
	// which every kind shares.
	extraFields func(l *Lock) []jen.Code
}

// kinds maps annotation kind names to emitters; each kind_<name>.go file
// registers one entry from its init function.
var kinds = map[string]kindEmitter{}

// registerKind adds the emitter of kind k (a row of the family table, which
// names its runtime constant).
func registerKind(k family.Kind, e kindEmitter) {
	e.runtimeConst = k.Const
	kinds[k.Name] = e
}

// KnownKind reports whether the templates can emit a lock of kind name.
func KnownKind(name string) bool {
	_, ok := kinds[name]
	return ok
}
