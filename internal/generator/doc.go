// Package generator is lockgen's core: it loads Go packages, finds `//lock:`
// annotations, checks them against go/types and returns the files to write
// and every problem found. It never prints, writes or exits; cmd/lockgen does
// that.
//
// Loading uses golang.org/x/tools/go/packages with
// NeedName|NeedFiles|NeedSyntax|NeedTypes|NeedTypesInfo (dependencies come
// from export data, never NeedDeps). lockgen's own earlier output is kept out
// of the load: a file with the output name that starts with the lockgen
// header is replaced, through packages.Config.Overlay, by a file excluded by
// a build constraint. A stale or broken lock_gen.go therefore never blocks
// regeneration. A file with the output name that lockgen did not write is
// never overwritten.
//
// Decisions are made with go/types, not by reading syntax:
//
//   - the first parameter of an annotated method must be context.Context (a
//     named type Context of package "context"), the last result must be the
//     predeclared error;
//   - a placeholder's root is a parameter; each selector is a field or a
//     method without arguments returning one value, looked up with
//     types.LookupFieldOrMethod (promoted fields and methods included, pointers
//     followed). Every pointer or interface on the way is checked for nil in
//     the generated code, which returns an error wrapping
//     runtime.ErrInvalidKey instead of panicking;
//   - the value's type picks its rendering, first match wins: a string,
//     integer or bool underlying type (strconv, escaped strings), a pointer to
//     one of those (dereferenced after a nil check), encoding.TextMarshaler
//     (runtime.EscapeText), fmt.Stringer (runtime.EscapeKeyPart(v.String())),
//     then a slice or array of any of those, which expands to one lock per
//     element (all-or-nothing). An empty slice is an error wrapping
//     runtime.ErrInvalidKey at run time: locking nothing would run the method
//     unprotected. []byte is refused (convert it to string). A type
//     parameter is rendered by its type set (all strings, all integers of
//     one signedness, all bools: converted) or by the String/MarshalText
//     method its constraint requires (typeparam.go).
//
// Wrapped types: every named type with at least one annotated method gets a
// wrapper. For a concrete type the wrapper has every exported method of *T
// (annotated ones lock, others delegate) plus annotated unexported methods;
// for an interface, every method of the interface. Promoted methods keep
// their annotations, from this package or read from another package's
// source (promoted.go). Annotations anywhere else, and lines that only look
// like annotations, are errors (annotation.Scan), in every Go file of the
// directory: test files and build-excluded files too (otherfiles.go).
//
// Across the package, key templates that can render the same key must use
// one lock family (keyfamily.go): each family has its own Redis keys, so a
// mutex and a fair lock on one key would not exclude each other.
package generator
