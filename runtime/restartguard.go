package runtime

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/internal/goredis"
	"github.com/lockgen/lockgen/lua"
)

// WithRestartGuard makes the Locker refuse grants on a Redis server that
// started less than longest ago: antirez's "delayed restart" for servers
// without persistence, which come back empty after a crash while the
// holders of the locks they forgot still run until their leases end.
// longest must be at least the longest lease any client uses on that
// server. Every Locker of the deployment should use it.
//
// The guard reads uptime_in_seconds from INFO server: once
// before the first acquire, and again whenever the go-redis client has
// dialled a connection since (a restarted server drops every connection, so
// the client dials before it can reach the new process), including during
// an acquire, whose grant is then given back if the server turns out to be
// fresh. A refused acquire is busy to the caller: it waits (within its
// Wait) until the guard opens, or fails with ErrNotAcquired. No key is
// written. On Cluster every master is asked and the youngest decides.
// It adds a dial hook to the client; it needs INFO in the ACL. Only a
// go-redis backend (New) supports it.
func WithRestartGuard(longest time.Duration) Option {
	return func(l *Locker) {
		if longest < time.Millisecond || longest > maxLease {
			l.guardErr = fmt.Errorf("%w: WithRestartGuard(%v): want 1ms..%v", ErrInvalidLock, longest, maxLease)
			return
		}
		g, ok := goredis.NewRestartGuard(l.given, longest)
		if !ok {
			l.guardErr = fmt.Errorf("%w: WithRestartGuard needs a go-redis backend (New), not %T", ErrInvalidLock, l.given)
			return
		}
		l.backend = &guardedBackend{Backend: l.backend, guard: g}
		l.queue = nil // every call must pass the guard (coalesced)
	}
}

// guardedBackend puts the restart guard in front of the acquire scripts;
// everything else passes through.
type guardedBackend struct {
	backend.Backend
	guard *goredis.RestartGuard
}

// releaseOf maps each kind's acquire script to the release that gives its
// grant back (the same KEYS; ARGV holder, lease, publish command), from the
// runtime's family table.
var releaseOf = acquireReleases()

func acquireReleases() map[*lua.Script]*lua.Script {
	m := make(map[*lua.Script]*lua.Script, len(families))
	for k := Mutex; k <= Semaphore; k++ {
		m[families[k].acquire] = families[k].release
	}
	return m
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
	release, isAcquire := releaseOf[c.Script]
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
	return []any{int64(0), max(ms, 1)}
}

func isGrant(reply any) bool {
	flag, _, _, err := parseAcquire(reply)
	return err == nil && flag == acquireGranted
}
