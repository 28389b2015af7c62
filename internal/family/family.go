// Package family is the one table of lock kinds that the runtime, the
// generator, `lockgen locks` and locktest share: how a kind is spelled in an
// annotation, which runtime.Kind constant stands for it, and where its keys
// live in Redis (RenderKeys spells a lock's keys out). Each of them used to
// spell these out on its own; now they read them here, and tests in each
// check that their own tables (the runtime's scripts, the generator's
// emitters) have a row for every kind.
//
// Only facts that two or more of those places need belong here. What only
// one of them needs (the runtime's scripts, whether a busy acquire registers
// the caller) stays with it.
package family

import "strings"

// Kind is one lock kind.
type Kind struct {
	// Name is the kind as written after "//lock:" and as runtime.Kind's
	// String returns it.
	Name string
	// Const is the runtime.Kind constant generated code names, e.g. "Mutex".
	Const string
	// Family is the middle part of the lock's base key,
	// prefix + Family + ":{" + key + "}". Each family keeps its own keys, so
	// "order:1" as a mutex and as a fair lock are two different locks; read
	// and write are the two sides of one lock and share "rw".
	Family string
	// Suffixes are the lock's other KEYS, each the base key plus a suffix,
	// in the order the scripts take them after the base key (KEYS[2],
	// KEYS[3], ...); the last one is the wake channel. Kinds of one family
	// share them.
	Suffixes []string
	// Whole marks the kind that stands for its family's whole lock where
	// only the family is known: a base key met by a scan, or "rw" in a
	// KIND:KEY name. Write for the read/write lock (inspecting it shows the
	// whole lock); for a family of one kind, that kind.
	Whole bool
}

// The kinds. All lists them in the order of the runtime.Kind constants
// (Mutex is 1) and of diagnostics.
var (
	Mutex = Kind{Name: "mutex", Const: "Mutex", Family: "mutex",
		Suffixes: []string{":waiters", ":wake"}, Whole: true}
	Fair = Kind{Name: "fair", Const: "Fair", Family: "fair",
		Suffixes: []string{":queue", ":alive", ":wake"}, Whole: true}
	Read = Kind{Name: "read", Const: "Read", Family: "rw",
		Suffixes: []string{":readers", ":wake"}}
	Write = Kind{Name: "write", Const: "Write", Family: "rw",
		Suffixes: []string{":readers", ":wake"}, Whole: true}
	Semaphore = Kind{Name: "semaphore", Const: "Semaphore", Family: "sem",
		Suffixes: []string{":holds", ":wake"}, Whole: true}

	All = []Kind{Mutex, Fair, Read, Write, Semaphore}
)

// Named returns the kind whose Name is name.
func Named(name string) (Kind, bool) {
	if i, ok := Index(name); ok {
		return All[i], true
	}
	return Kind{}, false
}

// Index returns the position in All of the kind whose Name is name: the
// runtime.Kind constant of that kind is the position plus one.
func Index(name string) (int, bool) {
	for i, k := range All {
		if k.Name == name {
			return i, true
		}
	}
	return 0, false
}

// NameList is the kinds' names in the order of All, for an error message:
// "mutex, fair, read, write, semaphore".
func NameList() string {
	names := make([]string, len(All))
	for i, k := range All {
		names[i] = k.Name
	}
	return strings.Join(names, ", ")
}

// OfFamily returns the kind that stands for the whole lock of key family
// fam (see Kind.Whole): Write for "rw", Semaphore for "sem".
func OfFamily(fam string) (Kind, bool) {
	for _, k := range All {
		if k.Family == fam && k.Whole {
			return k, true
		}
	}
	return Kind{}, false
}

// Shared reports whether k's family has other kinds too (the read/write
// lock): then a name for the whole lock is the family's, not k's.
func (k Kind) Shared() bool {
	for _, o := range All {
		if o.Family == k.Family && o.Name != k.Name {
			return true
		}
	}
	return false
}

// LockName is how the whole lock k belongs to is named in a KIND:KEY
// (`lockgen locks`): k's own name, or the family's ("rw") for a kind that
// is one side of a shared lock.
func (k Kind) LockName() string {
	if k.Shared() {
		return k.Family
	}
	return k.Name
}

// Keys returns the suffixes of every KEY of k in script order, the base key
// first as "": what KEYS[1], KEYS[2], ... add to the base key.
func (k Kind) Keys() []string {
	return append([]string{""}, k.Suffixes...)
}

// Wake is the suffix of k's wake channel, its last KEY.
func (k Kind) Wake() string { return k.Suffixes[len(k.Suffixes)-1] }

// RenderKeys returns every KEY of k for the rendered key key, in script
// order: the base key B = prefix + Family + ":{" + key + "}", then B plus
// each suffix. They go into store if it has room (a caller's array, reused),
// else into a slice of their own; all are cut from one string, so that
// rendering costs one allocation (that string), or two (and the slice),
// rather than one per key: the runtime renders them on every Acquire.
func (k Kind) RenderKeys(prefix, key string, store []string) []string {
	baseLen := len(prefix) + len(k.Family) + len(":{") + len(key) + len("}")
	total := baseLen
	for _, s := range k.Suffixes {
		total += baseLen + len(s)
	}
	var b strings.Builder
	b.Grow(total)
	ends := make([]int, 0, 1+len(k.Suffixes)) // where each key ends in b
	for i := -1; i < len(k.Suffixes); i++ {
		b.WriteString(prefix)
		b.WriteString(k.Family)
		b.WriteString(":{")
		b.WriteString(key)
		b.WriteString("}")
		if i >= 0 {
			b.WriteString(k.Suffixes[i])
		}
		ends = append(ends, b.Len())
	}
	all := b.String()
	keys := store[:0]
	if cap(keys) < len(ends) {
		keys = make([]string, 0, len(ends))
	}
	keys = keys[:len(ends)]
	start := 0
	for i, end := range ends {
		keys[i] = all[start:end]
		start = end
	}
	return keys
}
