package generator

import "github.com/lockgen/lockgen/internal/annotation"

// keyPattern is what the lock-order check knows about the keys a template
// can render: its lock family (the runtime keeps mutex, fair, read/write and
// semaphore keys apart, so "order:1" as a mutex and as a fair lock are two
// different locks) and its text, literal bytes with a wildcard for each
// placeholder.
//
// A placeholder renders to an escaped value (runtime.EscapeKeyPart): bytes
// from A-Z a-z 0-9 - _ . ~ and %, possibly none. So the wildcard matches any
// string over that alphabet, and two templates may render the same key
// exactly when their patterns share a string. That is decided precisely
// below; it is the conservative rule the check uses for "the same lock"
// (order:<id> and order:<req.OrderID> may be the same key, order:<id> and
// order:<id>:audit never are, since no value contains ':').
type keyPattern struct {
	family string
	tokens []int // a byte, or wildcard
}

const wildcard = -1

// newKeyPattern builds the pattern of one key template of an annotation of
// the given kind.
func newKeyPattern(kind annotation.Kind, t annotation.Template) keyPattern {
	p := keyPattern{family: lockFamily(kind)}
	for _, part := range t.Parts {
		if part.Placeholder != nil {
			p.tokens = append(p.tokens, wildcard)
			continue
		}
		for i := 0; i < len(part.Literal); i++ {
			p.tokens = append(p.tokens, int(part.Literal[i]))
		}
	}
	return p
}

// lockFamily mirrors the runtime's key families: read and write are two
// sides of one lock.
func lockFamily(k annotation.Kind) string {
	if k == annotation.Read || k == annotation.Write {
		return "rw"
	}
	return string(k)
}

// mayCollide reports whether a and b can render the same Redis lock.
func mayCollide(a, b keyPattern) bool {
	return a.family == b.family && patternsIntersect(a.tokens, b.tokens)
}

// patternsIntersect reports whether some string matches both patterns. It
// walks the product of the two patterns (positions i in a, j in b): a
// wildcard may end (move past it without reading), a literal byte must be
// read by both sides, a wildcard reads any value byte. At most
// (len(a)+1)*(len(b)+1) states, each visited once.
func patternsIntersect(a, b []int) bool {
	width := len(b) + 1
	seen := make([]bool, (len(a)+1)*width)
	stack := []int{0}
	seen[0] = true
	push := func(i, j int) {
		if s := i*width + j; !seen[s] {
			seen[s] = true
			stack = append(stack, s)
		}
	}
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		i, j := s/width, s%width
		if i == len(a) && j == len(b) {
			return true
		}
		aWild := i < len(a) && a[i] == wildcard
		bWild := j < len(b) && b[j] == wildcard
		if aWild {
			push(i+1, j)
		}
		if bWild {
			push(i, j+1)
		}
		if i == len(a) || j == len(b) {
			continue
		}
		switch {
		case !aWild && !bWild:
			if a[i] == b[j] {
				push(i+1, j+1)
			}
		case aWild && !bWild:
			if valueByte(b[j]) {
				push(i, j+1)
			}
		case !aWild && bWild:
			if valueByte(a[i]) {
				push(i+1, j)
			}
		}
		// Both wildcards reading the same byte leads back to (i, j).
	}
	return false
}

// valueByte reports whether an escaped placeholder value can contain c.
func valueByte(c int) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '_' || c == '.' || c == '~' || c == '%'
}

// takenBefore reports whether the runtime takes a before b when one Acquire
// call asks for both, and whether that is known from the templates alone.
// Acquire sorts by base key, family + ":{" + key + "}" after a common
// prefix, and holds the earlier locks while it waits for later ones. The
// order is known when the base keys differ at a byte before any
// placeholder; a placeholder there could render anything.
func takenBefore(a, b keyPattern) (before, known bool) {
	if a.family != b.family {
		return a.family+":{" < b.family+":{", true
	}
	for i := 0; ; i++ {
		ca, cb := baseByte(a.tokens, i), baseByte(b.tokens, i)
		switch {
		case ca == wildcard || cb == wildcard:
			return false, false
		case ca != cb:
			return ca < cb, true
		case ca == '}':
			return false, false // the same key
		}
	}
}

// baseByte is the i-th token of the key followed by the closing '}' of the
// base key.
func baseByte(tokens []int, i int) int {
	if i < len(tokens) {
		return tokens[i]
	}
	return '}'
}
