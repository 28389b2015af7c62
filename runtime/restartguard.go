package runtime

import (
	"fmt"
	"time"

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
		l.backend = g.Guard(l.backend, releaseOf)
		l.queue = nil // every call must pass the guard (coalesced)
	}
}

// releaseOf maps each kind's acquire script to the release that gives its
// grant back (the same KEYS; ARGV holder, lease, publish command), from the
// runtime's family table: the scripts the guard stands in front of
// (goredis's RestartGuard.Guard).
var releaseOf = acquireReleases()

func acquireReleases() map[*lua.Script]*lua.Script {
	m := make(map[*lua.Script]*lua.Script, len(families))
	for k := Mutex; k <= Semaphore; k++ {
		m[families[k].acquire] = families[k].release
	}
	return m
}
