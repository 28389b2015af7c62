// Package keyescape escapes the values that go into a rendered lock key
// (runtime.EscapeKeyPart, what generated code calls on every string
// placeholder). Keys are rendered from literal template text and
// placeholder values; Escape leaves only the RFC 3986 unreserved bytes
// (A-Z a-z 0-9 - _ . ~) as they are and percent-encodes every other byte.
// Two properties follow, and they are what the package guarantees:
//
//   - A value can never contain '{' or '}', so it cannot move the Redis
//     Cluster hash tag that the Locker puts around the whole key.
//   - As long as the literal text between two placeholders contains at least
//     one byte outside the unreserved set (the generator insists on it; ':'
//     is the usual choice), two different argument tuples can never render
//     the same key: the first such byte after a value marks where it ends.
//
// It exists apart from package runtime so that the encoding is defined and
// tested in one place; runtime keeps the exported name.
package keyescape

import "strings"

const upperHex = "0123456789ABCDEF"

// Escape returns s with every byte outside A-Z a-z 0-9 - _ . ~
// percent-encoded (%XX, upper-case hex); s itself, without allocating,
// when there is none.
func Escape(s string) string {
	n := 0
	for i := 0; i < len(s); i++ {
		if !unreserved(s[i]) {
			n++
		}
	}
	if n == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 2*n)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if unreserved(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(upperHex[c>>4])
		b.WriteByte(upperHex[c&0xF])
	}
	return b.String()
}

// unreserved reports whether Escape leaves c as it is: A-Z a-z 0-9 - _ . ~.
func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '_' || c == '.' || c == '~'
}
