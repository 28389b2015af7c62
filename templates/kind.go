package templates

import "github.com/dave/jennifer/jen"

// kindEmitter fills in the kind-specific part of a runtime.Lock literal.
type kindEmitter struct {
	// runtimeConst is the runtime.Kind constant, e.g. "Mutex".
	runtimeConst string
	// extraFields returns `Name: value` elements for fields beyond Kind, Key, Lease, NoRenew and Wait,
	// which every kind shares.
	extraFields func(l *Lock) []jen.Code
}

// kinds maps annotation kind names to emitters; each kind_<name>.go file
// registers one entry from its init function.
var kinds = map[string]kindEmitter{}

func registerKind(name string, e kindEmitter) { kinds[name] = e }

// KnownKind reports whether the templates can emit a lock of kind name.
func KnownKind(name string) bool {
	_, ok := kinds[name]
	return ok
}
