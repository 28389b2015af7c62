package generator

import (
	"github.com/lockgen/lockgen/internal/annotation"
	"github.com/lockgen/lockgen/internal/family"
)

// Key patterns: what the generator knows about the Redis keys a key
// template can render. Two checks ask the same question of them, "can these
// two templates render the same key?": the kinds-on-one-key check
// (keyfamily.go) and the lock-order check (lockorder*.go).
//
// A placeholder renders to an escaped value (runtime.EscapeKeyPart): bytes
// from A-Z a-z 0-9 - _ . ~ and %, possibly none. So a placeholder is a
// wildcard over that alphabet, and two templates can render the same key
// exactly when their patterns share a string, which patternsIntersect
// decides precisely: order:<id> and order:<req.OrderID> (or order:42, or
// order:x<n>) may meet, order:<id> and order:<id>:audit never do, since no
// value contains ':'.

// keyPattern is a template's lock family and its text: literal bytes, with
// a wildcard for each placeholder.
type keyPattern struct {
	family string
	tokens []int // a byte, or wildcard
}

const wildcard = -1

// newKeyPattern builds the pattern of one key template of an annotation of
// the given kind.
func newKeyPattern(kind annotation.Kind, t annotation.Template) keyPattern {
	return keyPattern{family: lockFamily(kind), tokens: templateTokens(t)}
}

// templateTokens is t's text with a wildcard for each placeholder.
func templateTokens(t annotation.Template) []int {
	var tokens []int
	for _, part := range t.Parts {
		if part.Placeholder != nil {
			tokens = append(tokens, wildcard)
			continue
		}
		for i := 0; i < len(part.Literal); i++ {
			tokens = append(tokens, int(part.Literal[i]))
		}
	}
	return tokens
}

// lockFamily is the kind's key family (internal/family): each family keeps
// its own Redis keys, so "order:1" as a mutex and as a fair lock are two
// different locks; read and write are the two sides of one lock and share
// "rw". A kind the table does not know (never, once parsed) is its own.
func lockFamily(k annotation.Kind) string {
	if f, ok := family.Named(string(k)); ok {
		return f.Family
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
