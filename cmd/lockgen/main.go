// Command lockgen writes Redis-lock wrappers for methods annotated with
// `//lock:` comments (docs/generator.md), and inspects and clears locks in
// Redis (docs/operations.md).
//
//	lockgen [-o FILE] [-check] [packages]
//	lockgen locks ls|show|release ...
package main

import (
	"context"
	"os"

	"github.com/redis/go-redis/v9"
)

func main() { os.Exit(dispatch(os.Args[1:])) }

// dispatch runs `lockgen locks ...` as the operator's tool and anything
// else as the generator. A package directory named locks is spelt ./locks.
func dispatch(args []string) int {
	if len(args) > 0 && args[0] == "locks" {
		// go-redis logs its retries to stderr; the command reports the
		// error that ends them itself.
		redis.SetLogger(silent{})
		return runLocks(args[1:], os.Stdout, os.Stderr)
	}
	return run(args, os.Stdout, os.Stderr)
}

type silent struct{}

func (silent) Printf(context.Context, string, ...any) {}
