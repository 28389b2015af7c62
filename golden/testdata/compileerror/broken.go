// Package compileerror has a real type error next to a reference to the
// wrapper lockgen has not written yet: the first must be reported once, at
// its position; the second must not be reported at all.
package compileerror

import "context"

type S struct{}

//lock:mutex key=k
func (s *S) M(ctx context.Context) error { return nil }

var _ = NewSLocked

var broken int = "not an int"
