package goredis

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/internal/protocol"
	"github.com/lockgen/lockgen/lua"
)

// Guard returns b with g in front of the acquire scripts: releaseOf maps
// each acquire script to the release that gives its grant back (the same
// KEYS; ARGV holder, lease, publish command). An acquire runs only while
// the guard is open; a refused one gets the busy reply {0, wait_ms}, so
// that its caller waits until the guard opens (at most one lease, ARGV[2])
// or gives up, and no key is written. A grant made on a connection dialled
// during the call is given back if the server behind it turns out to be
// fresh, and refused the same way. Every other call passes through.
func (g *RestartGuard) Guard(b backend.Backend, releaseOf map[*lua.Script]*lua.Script) backend.Backend {
	return &guardedBackend{Backend: b, guard: g, releaseOf: releaseOf}
}

// guardedBackend puts the restart guard in front of the acquire scripts;
// everything else passes through.
type guardedBackend struct {
	backend.Backend
	guard     *RestartGuard
	releaseOf map[*lua.Script]*lua.Script
}

func (b *guardedBackend) Eval(ctx context.Context, c backend.Call) (any, error) {
	reply, _, err := b.guarded(ctx, c, func() (any, int, error) {
		v, err := b.Backend.Eval(ctx, c)
		return v, 0, err
	})
	return reply, err
}

func (b *guardedBackend) EvalWait(ctx context.Context, c backend.Call, replicas int, timeout time.Duration) (any, int, error) {
	return b.guarded(ctx, c, func() (any, int, error) { return b.Backend.EvalWait(ctx, c, replicas, timeout) })
}

// guarded runs an acquire only while the guard is open, and gives back a
// grant made on a connection dialled during the call if the server behind
// it turns out to be fresh. A refusal is a busy reply that asks the caller
// to retry when the guard opens.
func (b *guardedBackend) guarded(ctx context.Context, c backend.Call, run func() (any, int, error)) (any, int, error) {
	release, isAcquire := b.releaseOf[c.Script]
	if !isAcquire {
		return run()
	}
	wait, dials, err := b.guard.OpenIn(ctx)
	if err != nil {
		return nil, 0, err
	}
	if wait > 0 {
		return refusal(c, wait), 0, nil
	}
	reply, acked, err := run()
	if err != nil || !isGrant(reply) || b.guard.Dials() == dials {
		return reply, acked, err
	}
	if wait, _, err = b.guard.OpenIn(ctx); err == nil && wait <= 0 {
		return reply, acked, nil
	}
	back := backend.Call{Script: release, Keys: c.Keys, Args: c.Args[:3]}
	if _, rerr := b.Backend.Eval(ctx, back); rerr != nil && err == nil {
		err = fmt.Errorf("lockgen: restart guard: give back a grant made on a fresh server: %w", rerr)
	}
	if err != nil {
		return nil, 0, err
	}
	return refusal(c, wait), 0, nil
}

// refusal is the busy reply {0, wait_ms} of a refused acquire: retry when
// the guard opens, at most one lease (ARGV[2]) from now.
func refusal(c backend.Call, wait time.Duration) []any {
	ms := wait.Milliseconds() + 1
	if lease, err := strconv.ParseInt(c.Args[1], 10, 64); err == nil && ms > lease {
		ms = lease
	}
	return []any{int64(protocol.AcquireBusy), max(ms, 1)}
}

func isGrant(reply any) bool {
	a, err := protocol.ParseAcquire(reply)
	return err == nil && a.Granted()
}
