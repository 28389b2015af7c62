// Package annotation parses lockgen's `//lock:` comment lines.
//
// An annotation is one line in the doc comment of a method, written like a
// Go directive (no space after the slashes):
//
//	//lock:<kind> key=<template> [key=<template> ...] [option=value ...]
//
// Parse takes the whole comment text, as go/ast gives it in ast.Comment.Text,
// and returns the Annotation together with every problem it found. Each
// problem is an *Error carrying the byte offset of the offending token inside
// that text, so a caller that knows where the comment starts (ast.Comment.Slash)
// can report the exact line and column.
//
// The parser knows only the grammar. Whether a placeholder names a parameter,
// and whether that parameter's type can be rendered into a key, is decided by
// the generator with go/types.
//
// # Kinds
//
// mutex, fair, read, write, semaphore.
//
// # Options
//
//	key=<template>   required; repeatable (several keys, all-or-nothing)
//	lease=<duration> Go duration, 1ms ≤ lease ≤ 2^31 ms; default: the Locker's (30s)
//	renew=true|false default true
//	wait=<duration>  Go duration ≥ 0; 0 tries once; default: until ctx is done
//	permits=<n>      semaphore only, required there, ≥ 1
//	onbusy=error|skip default error
//	order=check|ignore default check; ignore leaves this line's locks out of
//	                 the generator's lock-order check
//
// Every option except key may appear once. Values are never quoted: a
// quoted value is refused (the quotes would become part of the key). Two
// slips are read as meant, with one diagnostic asking for the right
// spelling: spaces around '=' ("key = a:<id>") and a colon for '='
// ("key:a:<id>").
//
// # Key templates
//
// A template is literal text and placeholders:
//
//	order:<id>
//	tenant:<req.Tenant().ID>:order:<req.OrderID>
//
// A placeholder is a parameter name followed by any number of selectors, each
// a field name or a method name, with or without "()" (a method without
// arguments; go/types tells a method from a field).
// Literal text may not contain whitespace, control bytes, quotes, '{' or '}' (braces
// are the Redis Cluster hash tag around the whole key) or an unmatched '<' or
// '>'. Two placeholders must be separated by literal text holding at least one
// byte outside A-Z a-z 0-9 - _ . ~: values are escaped to exactly those bytes
// (plus %XX), so such a separator is what makes two different argument tuples
// render different keys.
//
// # Comments that are not annotations
//
// Scan reads every comment of a file: it returns the annotations in the doc
// comments of methods, and a Problem for every other annotation and for
// every line that only looks like one (FindLookalikes: "// lock:mutex",
// "//Lock:mutex", "/* lock:mutex */", "//lockgen:mutex"), saying how to
// write it. A method is never left unlocked because of how its annotation
// was spelled or where it was put.
package annotation
