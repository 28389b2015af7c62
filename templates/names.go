package templates

import "strconv"

// Names hands out identifiers that do not collide with anything already
// reserved: package names the output imports, type parameters, parameters,
// results and the wrapper's own locals. A user parameter called `runtime`,
// `err` or `held` is renamed in the wrapper rather than shadowing what the
// generated body needs.
type Names struct {
	used map[string]bool
}

// builtinsUsed are predeclared identifiers that generated bodies refer to; a
// parameter with one of these names would shadow it.
var builtinsUsed = []string{"len", "make", "append", "nil", "true", "false", "string", "bool", "int64", "uint64", "error"}

// NewNames returns an allocator with the given names and the builtins used by
// generated code already taken.
func NewNames(reserved ...string) *Names {
	n := &Names{used: make(map[string]bool)}
	for _, r := range builtinsUsed {
		n.used[r] = true
	}
	for _, r := range reserved {
		n.used[r] = true
	}
	return n
}

// Reserve marks name as taken.
func (n *Names) Reserve(name string) { n.used[name] = true }

// Fresh returns base if it is free, else base1, base2, ..., and takes it.
func (n *Names) Fresh(base string) string {
	if base == "" || base == "_" {
		base = "v"
	}
	name := base
	for i := 1; n.used[name]; i++ {
		name = base + strconv.Itoa(i)
	}
	n.used[name] = true
	return name
}
