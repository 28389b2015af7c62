package runtime

import (
	"encoding"
	"fmt"
	"strings"
)

// Keys are rendered by generated code (or by hand) from literal template text
// and placeholder values. Values pass through EscapeKeyPart, which leaves only
// the RFC 3986 unreserved bytes (A-Z a-z 0-9 - _ . ~) as they are and
// percent-encodes every other byte. Two properties follow:
//
//   - A value can never contain '{' or '}', so it cannot move the Redis
//     Cluster hash tag that the Locker puts around the whole key.
//   - As long as the literal text between two placeholders contains at least
//     one byte outside the unreserved set (the generator insists on it; ':'
//     is the usual choice), two different argument tuples can never render
//     the same key: the first such byte after a value marks where it ends.

const upperHex = "0123456789ABCDEF"

// EscapeKeyPart returns s with every byte outside A-Z a-z 0-9 - _ . ~
// percent-encoded (%XX, upper-case hex). Integers and booleans formatted by
// strconv need no escaping.
func EscapeKeyPart(s string) string {
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

// EscapeText marshals v with MarshalText and escapes the result with
// EscapeKeyPart. A marshalling error is returned wrapped in ErrInvalidKey.
func EscapeText(v encoding.TextMarshaler) (string, error) {
	b, err := v.MarshalText()
	if err != nil {
		return "", fmt.Errorf("%w: MarshalText: %w", ErrInvalidKey, err)
	}
	return EscapeKeyPart(string(b)), nil
}

func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '_' || c == '.' || c == '~'
}

// validateKey reports whether a rendered key can be wrapped in a hash tag:
// it must be non-empty and contain neither '{' nor '}'.
func validateKey(key string) error {
	if key == "" {
		return fmt.Errorf("%w: empty key", ErrInvalidKey)
	}
	for i := 0; i < len(key); i++ { // a loop: IndexAny builds its set of bytes on every call
		if c := key[i]; c == '{' || c == '}' {
			return fmt.Errorf("%w: %q contains %q at byte %d; escape values with EscapeKeyPart", ErrInvalidKey, key, c, i)
		}
	}
	return nil
}

// InvalidKeyError returns an error wrapping ErrInvalidKey with the given
// description. Generated code returns it when a key cannot be rendered (a
// nil pointer in a placeholder chain, an empty slice placeholder), so the
// generated file needs no fmt.
func InvalidKeyError(problem string) error {
	return &invalidKeyError{problem: problem}
}

type invalidKeyError struct{ problem string }

func (e *invalidKeyError) Error() string { return ErrInvalidKey.Error() + ": " + e.problem }
func (e *invalidKeyError) Unwrap() error { return ErrInvalidKey }
