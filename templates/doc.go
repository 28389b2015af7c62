// Package templates turns lockgen's resolved model of a package (which types
// to wrap, which methods lock what) into Go source, with jennifer.
//
// The generator (internal/generator) does all the deciding: it loads the
// package, checks every annotation against go/types and fills in a File.
// This package only emits. Each file here emits one concept:
//
//	file.go            the output file: header, imports, wrappers in order
//	wrapper.go         the wrapper struct, its constructor and compile-time guard
//	method_delegate.go a method that only forwards to the inner value
//	method_locked.go   a method that acquires, calls under held.Context(), releases
//	key.go             rendering a key template into a string expression
//	value.go           evaluating a placeholder chain with nil checks
//	kind.go            the lock-kind registry; kind_<name>.go registers one kind
//	typeexpr.go        go/types types as jennifer code
//	names.go           the identifier allocator that keeps parameters and
//	                   locals from colliding
//	duration.go        time.Duration constants as readable Go expressions
//	comments.go        doc comments that spell out each method's //lock: line
//	imports.go         the import block grouped as gofmt users expect
//
// Adding a lock kind means adding its row to the family table
// (internal/family, which names its runtime constant), a kind_<name>.go file
// that registers how its runtime.Lock literal is filled in, and the kind in
// package annotation; tests in each check they list the table's kinds.
//
// Output is deterministic: wrappers and methods come in the order of the
// model, imports are named explicitly with ImportName/ImportAlias, the
// source is formatted by jennifer through go/format, and the import block is
// then split into standard library and other packages.
package templates
