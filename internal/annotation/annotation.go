package annotation

import (
	"strings"
	"time"
)

// Prefix starts every annotation comment.
const Prefix = "//lock:"

// Is reports whether the comment text is meant as a lockgen annotation. It is
// deliberately loose (only the prefix), so that a malformed annotation is
// diagnosed rather than silently ignored.
func Is(commentText string) bool {
	return strings.HasPrefix(commentText, Prefix)
}

// Kind is a lock family.
type Kind string

// The lock families, as written after "//lock:".
const (
	Mutex     Kind = "mutex"
	Fair      Kind = "fair"
	Read      Kind = "read"
	Write     Kind = "write"
	Semaphore Kind = "semaphore"
)

// Kinds lists every kind in the order used by diagnostics.
var Kinds = []Kind{Mutex, Fair, Read, Write, Semaphore}

// OnBusy says what a wrapper does when the lock stays busy.
type OnBusy string

// The onbusy values.
const (
	OnBusyError OnBusy = "error" // return an error wrapping runtime.ErrNotAcquired
	OnBusySkip  OnBusy = "skip"  // return zero values and a nil error, method not called
)

// Lease bounds: the script protocol carries the lease as a whole number of
// milliseconds between 1 and 2^31.
const (
	MinLease = time.Millisecond
	MaxLease = (1 << 31) * time.Millisecond
)

// Annotation is one parsed `//lock:` line.
type Annotation struct {
	Kind       Kind
	KindOffset int // offset of the kind token in the comment text

	Keys []Template // at least one when parsing succeeded

	Lease   time.Duration // 0: not given (the Locker's default applies)
	Renew   bool          // false only when renew=false was given
	Wait    time.Duration // meaningful when HasWait
	HasWait bool          // wait= given; Wait == 0 means try once
	Permits int           // semaphore only

	OnBusy       OnBusy
	OnBusyOffset int // offset of the onbusy option, -1 when defaulted

	// OrderIgnore (order=ignore) leaves this line's locks out of the
	// generator's lock-order check: the escape hatch for a reported cycle
	// whose two paths never run at once.
	OrderIgnore bool
}

// Template is a parsed key template.
type Template struct {
	Source string // the template as written
	Offset int    // offset of Source in the comment text
	Parts  []Part // in order; adjacent literals never occur
}

// Part is either literal text or a placeholder.
type Part struct {
	Offset      int // offset in the comment text
	Literal     string
	Placeholder *Placeholder // nil for literal text
}

// Placeholder is `<root.sel.sel()...>`.
type Placeholder struct {
	Source    string     // text between the angle brackets
	Offset    int        // offset of '<' in the comment text
	Root      string     // parameter name
	Selectors []Selector // fields and niladic methods, in order
}

// Selector is one step of a placeholder chain.
type Selector struct {
	Name   string
	Call   bool // written as Name()
	Offset int  // offset of Name in the comment text
}
