// Command lockgen writes Redis-lock wrappers for methods annotated with
// `//lock:` comments. See docs/generator.md.
//
//	lockgen [-o FILE] [-check] [packages]
package main

import "os"

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }
