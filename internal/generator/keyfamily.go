package generator

import (
	"go/token"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/lockgen/lockgen/internal/annotation"
)

// Kinds on one key. Each lock family keeps its own Redis keys (mutex, fair,
// rw for read and write, sem), so a mutex and a fair lock on order:42 never
// exclude each other: two methods the user meant to serialise would run at
// the same time. Within a package, every pair of key templates that can
// render the same key must therefore use one family: read and write (the
// two sides of one lock) may share a key, any other mix is refused. That
// includes semaphore against the others (a semaphore's holders and a
// mutex's holder do not see each other either), and two semaphores with
// different permits (each caller would enforce its own limit).
//
// Whether two templates can render the same key is decided on their key
// patterns (keypattern.go): order:<id> and order:<tenant>:<id> cannot
// collide, while order:<id> and order:<n> (or order:42) can.

// keyUse is one key template of one annotation.
type keyUse struct {
	kind     annotation.Kind
	permits  int
	template annotation.Template
	pos      token.Pos // of the template
	method   string
}

// recordKey remembers a template for checkKeyFamilies. A promoted method's
// annotation is seen once per wrapper; it is recorded once.
func (a *analysis) recordKey(u keyUse) {
	if a.keyAt == nil {
		a.keyAt = make(map[token.Pos]bool)
	}
	if !a.keyAt[u.pos] {
		a.keyAt[u.pos] = true
		a.keys = append(a.keys, u)
	}
}

// checkKeyFamilies reports, once per template, the first earlier template
// of the package it conflicts with.
func (a *analysis) checkKeyFamilies() {
	uses := append([]keyUse(nil), a.keys...)
	sort.SliceStable(uses, func(i, j int) bool { return a.before(uses[i].pos, uses[j].pos) })
	for i, u := range uses {
		for _, v := range uses[:i] {
			if conflicting(u, v) && overlap(u.template, v.template) {
				a.errorf(u.pos, a.conflict(u, v))
				break
			}
		}
	}
}

// conflicting reports whether u and v may not lock the same key.
func conflicting(u, v keyUse) bool {
	return lockFamily(u.kind) != lockFamily(v.kind) || u.kind == annotation.Semaphore && u.permits != v.permits
}

// conflict says why u and v may not lock the same key.
func (a *analysis) conflict(u, v keyUse) string {
	this := "//lock:" + string(u.kind) + " key=" + u.template.Source + " on " + u.method
	that := "//lock:" + string(v.kind) + " key=" + v.template.Source + " on " + v.method + " (" + a.shortPosition(v.pos) + ")"
	if v.template.Source != u.template.Source {
		that += ", which can render the same keys"
	}
	if lockFamily(u.kind) != lockFamily(v.kind) {
		return this + " does not exclude " + that + ": each kind keeps its own Redis keys, so both methods could run at once; lock a key with one kind (only read and write share a key)"
	}
	return this + " has permits=" + strconv.Itoa(u.permits) + ", but " + that + " has permits=" + strconv.Itoa(v.permits) +
		": each caller would enforce its own limit; use one permits value per key"
}

// shortPosition is file:line:col with the file's base name: key uses are
// in one package, so in one directory, or in an embedded type's package.
func (a *analysis) shortPosition(pos token.Pos) string {
	p := a.pkg.Fset.Position(pos)
	return filepath.Base(p.Filename) + ":" + strconv.Itoa(p.Line) + ":" + strconv.Itoa(p.Column)
}

// overlap reports whether some key matches both templates.
func overlap(x, y annotation.Template) bool {
	return patternsIntersect(templateTokens(x), templateTokens(y))
}
