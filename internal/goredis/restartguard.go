package goredis

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
	"github.com/redis/go-redis/v9"
)

// NewRestartGuard returns the go-redis half of runtime.WithRestartGuard
// for b, which must be this package's backend (ok false otherwise): it
// counts the connections the client dials, and reads the servers' uptime
// when one was dialled since it last did, so that grants can wait until
// every master has been up for longest. It adds a dial hook to the client.
func NewRestartGuard(b backend.Backend, longest time.Duration) (g *RestartGuard, ok bool) {
	gb, ok := b.(*goRedisBackend)
	if !ok {
		return nil, false
	}
	g = &RestartGuard{maxLease: longest, rdb: gb.rdb}
	g.watchDials()
	return g, true
}

// Dials returns the connections the client has dialled so far: a grant
// made while it changed may have been made on a server that restarted.
func (g *RestartGuard) Dials() uint64 { return g.dials.Load() }

// RestartGuard knows when the server it guards will have been up for one
// maximum lease.
type RestartGuard struct {
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
func (g *RestartGuard) watchDials() {
	if cc, ok := g.rdb.(*redis.ClusterClient); ok {
		cc.OnNewNode(g.hookNode)
		return
	}
	g.rdb.AddHook(dialCounter{&g.dials})
}

// hookNode adds the dial counter to a Cluster node's client, once.
func (g *RestartGuard) hookNode(c *redis.Client) {
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

// OpenIn returns how long grants must still wait (0 or less: allowed), and
// the dial count it is valid for. It asks the server only when a connection
// was dialled since the last check.
func (g *RestartGuard) OpenIn(ctx context.Context) (time.Duration, uint64, error) {
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
func (g *RestartGuard) ask(ctx context.Context) (time.Time, error) {
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
