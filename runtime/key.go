package runtime

import (
	"encoding"
	"fmt"

	"github.com/lockgen/lockgen/internal/keyescape"
)

// Keys are rendered by generated code (or by hand) from literal template text
// and placeholder values, each value through EscapeKeyPart, so that a value
// can never move the hash tag around the key and two different argument
// tuples can never render the same key (internal/keyescape states when).

// EscapeKeyPart returns s with every byte outside A-Z a-z 0-9 - _ . ~
// percent-encoded (%XX, upper-case hex). Integers and booleans formatted by
// strconv need no escaping.
func EscapeKeyPart(s string) string { return keyescape.Escape(s) }

// EscapeText marshals v with MarshalText and escapes the result with
// EscapeKeyPart. A marshalling error is returned wrapped in ErrInvalidKey.
func EscapeText(v encoding.TextMarshaler) (string, error) {
	b, err := v.MarshalText()
	if err != nil {
		return "", fmt.Errorf("%w: MarshalText: %w", ErrInvalidKey, err)
	}
	return EscapeKeyPart(string(b)), nil
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
