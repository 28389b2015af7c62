// Command lockgen writes Redis-lock wrappers for methods annotated with
// `//lock:` comments (docs/generator.md), and inspects and clears locks in
// Redis (docs/operations.md).
//
//	lockgen [-o FILE] [-check] [packages]
//	lockgen [-redis URL ...] locks ls|show|release ...
package main

import (
	"context"
	"io"
	"os"

	"github.com/redis/go-redis/v9"
)

func main() { os.Exit(dispatch(os.Args[1:], os.Stdout, os.Stderr)) }

// dispatch runs `lockgen locks ...` (flags of locks may come first) as the
// operator's tool and anything else as the generator. A package directory
// named locks is spelt ./locks.
func dispatch(args []string, stdout, stderr io.Writer) int {
	if rest, ok := locksArgs(args); ok {
		// go-redis logs its retries to stderr; the command reports the
		// error that ends them itself.
		redis.SetLogger(silent{})
		return runLocks(rest, stdout, stderr)
	}
	return run(args, stdout, stderr)
}

type silent struct{}

func (silent) Printf(context.Context, string, ...any) {}
