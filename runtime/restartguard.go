package runtime

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/lua"
	"github.com/redis/go-redis/v9"
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
		gb, ok := l.given.(*goRedisBackend)
		if !ok {
			l.guardErr = fmt.Errorf("%w: WithRestartGuard needs a go-redis backend (New), not %T", ErrInvalidLock, l.given)
			return
		}
		g := &restartGuard{maxLease: longest, rdb: gb.rdb}
		g.watchDials()
		l.backend = &guardedBackend{Backend: l.backend, guard: g}
		l.queue = nil // every call must pass the guard (queueOf)
	}
}

// restartGuard knows when the server it guards will have been up for one
// maximum lease.
type restartGuard struct {
	maxLease time.Duration
	rdb      redis.UniversalClient
	dials    atomic.Uint64 // connections the client has dialled

	mu      sync.Mutex
	hooked  map[*redis.Client]bool // Cluster node clients that count dials
	checked bool
	atDials uint64    // dials when the last check started
	openAt  time.Time // when grants are allowed, as of the last check
}

// watchDials counts the connections the client dials. On Cluster the node
// clients dial: each node made from now on gets the hook, and those made
// before get it when ask meets them.
func (g *restartGuard) watchDials() {
	if cc, ok := g.rdb.(*redis.ClusterClient); ok {
		cc.OnNewNode(g.hookNode)
		return
	}
	g.rdb.AddHook(dialCounter{&g.dials})
}

// hookNode adds the dial counter to a Cluster node's client, once.
func (g *restartGuard) hookNode(c *redis.Client) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.hooked == nil {
		g.hooked = map[*redis.Client]bool{}
	}
	if !g.hooked[c] {
		g.hooked[c] = true
		c.AddHook(dialCounter{&g.dials})
	}
}

// openIn returns how long grants must still wait (0 or less: allowed), and
// the dial count it is valid for. It asks the server only when a connection
// was dialled since the last check.
func (g *restartGuard) openIn(ctx context.Context) (time.Duration, uint64, error) {
	dials := g.dials.Load()
	g.mu.Lock()
	fresh := g.checked && g.atDials == dials
	openAt := g.openAt
	g.mu.Unlock()
	if fresh {
		return time.Until(openAt), dials, nil
	}
	openAt, err := g.ask(ctx)
	if err != nil {
		return 0, dials, err
	}
	g.mu.Lock()
	g.checked, g.atDials, g.openAt = true, dials, openAt
	g.mu.Unlock()
	return time.Until(openAt), dials, nil
}

// ask reads INFO server from every master. uptime_in_seconds is counted
// from a start time cut to whole seconds, so a server that reports u may
// have started anywhere from u-1 to u+1 seconds ago: grants open at
// now - u + 1 s + maxLease, the latest over the masters.
func (g *restartGuard) ask(ctx context.Context) (time.Time, error) {
	var mu sync.Mutex
	var openAt time.Time
	one := func(ctx context.Context, c *redis.Client) error {
		info, err := c.Info(ctx, "server").Result()
		if err != nil {
			return fmt.Errorf("lockgen: restart guard: INFO server: %w", err)
		}
		up, err := parseUptime(info)
		if err != nil {
			return err
		}
		at := time.Now().Add(-up + time.Second + g.maxLease)
		mu.Lock()
		defer mu.Unlock()
		if at.After(openAt) {
			openAt = at
		}
		return nil
	}
	var err error
	switch c := g.rdb.(type) {
	case *redis.ClusterClient:
		err = c.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
			g.hookNode(node)
			return one(ctx, node)
		})
	case *redis.Client:
		err = one(ctx, c)
	default:
		err = fmt.Errorf("lockgen: restart guard: unsupported client %T", g.rdb)
	}
	return openAt, err
}

// parseUptime reads uptime_in_seconds from INFO server.
func parseUptime(info string) (time.Duration, error) {
	for _, line := range strings.Split(info, "\n") {
		v, ok := strings.CutPrefix(strings.TrimSpace(line), "uptime_in_seconds:")
		if !ok {
			continue
		}
		seconds, err := strconv.Atoi(v)
		if err != nil || seconds < 0 {
			return 0, fmt.Errorf("lockgen: restart guard: uptime_in_seconds %q in INFO server", v)
		}
		return time.Duration(seconds) * time.Second, nil
	}
	return 0, fmt.Errorf("lockgen: restart guard: INFO server has no uptime_in_seconds")
}

// dialCounter is a go-redis hook that counts successful dials.
type dialCounter struct{ n *atomic.Uint64 }

func (d dialCounter) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := next(ctx, network, addr)
		if err == nil {
			d.n.Add(1)
		}
		return conn, err
	}
}

func (d dialCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (d dialCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// guardedBackend puts the restart guard in front of the acquire scripts;
// everything else passes through.
type guardedBackend struct {
	backend.Backend
	guard *restartGuard
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
	wait, dials, err := b.guard.openIn(ctx)
	if err != nil {
		return nil, 0, err
	}
	if wait > 0 {
		return refusal(c, wait), 0, nil
	}
	reply, acked, err := run()
	if err != nil || !isGrant(reply) || b.guard.dials.Load() == dials {
		return reply, acked, err
	}
	if wait, _, err = b.guard.openIn(ctx); err == nil && wait <= 0 {
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
