package goredis

import (
	"context"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/lua"
	"github.com/redis/go-redis/v9"
)

// processor is a go-redis client or pipeline: what runs or queues a
// command.
type processor interface {
	Process(ctx context.Context, cmd redis.Cmder) error
}

// evalSha runs c as EVALSHA through p and returns the command, as
// p.EvalSha would, but without boxing again the KEYS and ARGV that c
// carries boxed (runtime/argv.go), nor the SHA1 of a runtime script.
func evalSha(ctx context.Context, p processor, c backend.Call) *redis.Cmd {
	return runScript(ctx, p, "evalsha", boxedSHA(c.Script), c)
}

// evalSource runs c as EVAL of the script's source, after a NOSCRIPT.
func evalSource(ctx context.Context, p processor, c backend.Call) *redis.Cmd {
	return runScript(ctx, p, "eval", c.Script.Source, c)
}

// runScript sends name body numkeys keys... args... (name and body come
// boxed: a string parameter put in an any would allocate on every call).
func runScript(ctx context.Context, p processor, name, body any, c backend.Call) *redis.Cmd {
	args := make([]any, 0, 3+len(c.Keys)+len(c.Args))
	args = append(args, name, body, len(c.Keys))
	if vals, ok := c.Boxed(); ok {
		args = append(args, vals...)
	} else {
		for _, k := range c.Keys {
			args = append(args, k)
		}
		for _, a := range c.Args {
			args = append(args, a)
		}
	}
	cmd := redis.NewCmd(ctx, args...)
	if len(c.Keys) > 0 {
		cmd.SetFirstKeyPos(3) // as EvalSha does: Cluster routing by the first key
	}
	_ = p.Process(ctx, cmd) // the error is also the command's
	return cmd
}

// scriptSHAs holds every script's SHA1 boxed, for EVALSHA commands. It is
// made once and only read afterwards.
var scriptSHAs = func() map[*lua.Script]any {
	m := map[*lua.Script]any{}
	for _, s := range lua.All() {
		m[s] = s.SHA1
	}
	return m
}()

// boxedSHA returns s.SHA1 boxed, without allocating for the runtime's
// scripts.
func boxedSHA(s *lua.Script) any {
	if v, ok := scriptSHAs[s]; ok {
		return v
	}
	return s.SHA1
}
