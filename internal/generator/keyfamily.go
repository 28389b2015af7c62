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
// Two templates can render the same key when some string matches both,
// every placeholder standing for any escaped value: a possibly empty run of
// A-Z a-z 0-9 - _ . ~ %. Because values never contain other bytes,
// order:<id> and order:<tenant>:<id> cannot collide, while order:<id> and
// order:<n> (or order:42) can.

// keyUse is one key template of one annotation.
type keyUse struct {
	kind     annotation.Kind
	permits  int
	template annotation.Template
	pos      token.Pos // of the template
	method   string
}

func family(k annotation.Kind) string {
	switch k {
	case annotation.Read, annotation.Write:
		return "rw"
	case annotation.Semaphore:
		return "sem"
	}
	return string(k)
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
	return family(u.kind) != family(v.kind) || u.kind == annotation.Semaphore && u.permits != v.permits
}

// conflict says why u and v may not lock the same key.
func (a *analysis) conflict(u, v keyUse) string {
	this := "//lock:" + string(u.kind) + " key=" + u.template.Source + " on " + u.method
	that := "//lock:" + string(v.kind) + " key=" + v.template.Source + " on " + v.method + " (" + a.shortPosition(v.pos) + ")"
	if v.template.Source != u.template.Source {
		that += ", which can render the same keys"
	}
	if family(u.kind) != family(v.kind) {
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

// keySymbol is one byte of a template's literal text, or a placeholder.
type keySymbol struct {
	b    byte
	wild bool
}

func symbols(t annotation.Template) []keySymbol {
	var out []keySymbol
	for _, p := range t.Parts {
		if p.Placeholder != nil {
			out = append(out, keySymbol{wild: true})
			continue
		}
		for i := 0; i < len(p.Literal); i++ {
			out = append(out, keySymbol{b: p.Literal[i]})
		}
	}
	return out
}

func valueByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '_' || c == '.' || c == '~' || c == '%'
}

// overlap reports whether some key matches both templates: a search over
// pairs of positions, where a placeholder may end (move on) or consume a
// value byte that the other side matches.
func overlap(x, y annotation.Template) bool {
	a, b := symbols(x), symbols(y)
	type state struct{ i, j int }
	seen := make(map[state]bool)
	stack := []state{{0, 0}}
	push := func(i, j int) {
		if s := (state{i, j}); !seen[s] {
			seen[s] = true
			stack = append(stack, s)
		}
	}
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if s.i == len(a) && s.j == len(b) {
			return true
		}
		var sa, sb *keySymbol
		if s.i < len(a) {
			sa = &a[s.i]
		}
		if s.j < len(b) {
			sb = &b[s.j]
		}
		if sa != nil && sa.wild {
			push(s.i+1, s.j) // the value ends here
		}
		if sb != nil && sb.wild {
			push(s.i, s.j+1)
		}
		switch {
		case sa == nil || sb == nil:
		case !sa.wild && !sb.wild:
			if sa.b == sb.b {
				push(s.i+1, s.j+1)
			}
		case sa.wild && !sb.wild:
			if valueByte(sb.b) {
				push(s.i, s.j+1) // the value goes on with sb's byte
			}
		case !sa.wild && sb.wild:
			if valueByte(sa.b) {
				push(s.i+1, s.j)
			}
		}
		// Two placeholders side by side consume the same bytes: covered by
		// letting either end first.
	}
	return false
}
