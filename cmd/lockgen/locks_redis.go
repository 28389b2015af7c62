package main

import (
	"context"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"sync"

	"github.com/lockgen/lockgen/internal/family"
	"github.com/lockgen/lockgen/runtime"
	"github.com/redis/go-redis/v9"
)

// redisConn is the client `lockgen locks` works through, and how it scans.
type redisConn struct {
	rdb     redis.UniversalClient
	cluster *redis.ClusterClient // nil off Cluster
}

func (c *redisConn) close() { c.rdb.Close() }

// connect opens a client for address:
//   - redis-sentinel://[user:pass@]host:port[,host:port...]/MASTER[/DB]: a
//     Sentinel deployment; so is any URL with sentinelMaster set (its
//     addresses are then the Sentinels');
//   - redis://, rediss:// or host:port: one server, or, if that server says
//     it is part of a Cluster, the Cluster it belongs to.
func connect(ctx context.Context, address, sentinelMaster string) (*redisConn, error) {
	if strings.HasPrefix(address, "redis-sentinel://") || sentinelMaster != "" {
		opts, err := sentinelOptions(address, sentinelMaster)
		if err != nil {
			return nil, err
		}
		return &redisConn{rdb: redis.NewFailoverClient(opts)}, nil
	}
	if !strings.Contains(address, "://") {
		address = "redis://" + address
	}
	opts, err := redis.ParseURL(address)
	if err != nil {
		return nil, fmt.Errorf("-redis %q: %w", address, err)
	}
	single := redis.NewClient(opts)
	info, err := single.Info(ctx, "cluster").Result()
	if err != nil {
		single.Close()
		return nil, fmt.Errorf("%s: %w", opts.Addr, err)
	}
	if !strings.Contains(info, "cluster_enabled:1") {
		return &redisConn{rdb: single}, nil
	}
	single.Close()
	cl := redis.NewClusterClient(&redis.ClusterOptions{
		Addrs: []string{opts.Addr}, Username: opts.Username, Password: opts.Password, TLSConfig: opts.TLSConfig,
	})
	return &redisConn{rdb: cl, cluster: cl}, nil
}

// sentinelOptions reads redis-sentinel://[user:pass@]h:p[,h:p...]/MASTER[/DB],
// or a redis:// URL naming the Sentinels with master given apart.
func sentinelOptions(address, master string) (*redis.FailoverOptions, error) {
	rest := address
	if i := strings.Index(rest, "://"); i >= 0 {
		rest = rest[i+3:]
	}
	auth := ""
	if i := strings.LastIndex(rest, "@"); i >= 0 {
		auth, rest = rest[:i], rest[i+1:]
	}
	hosts, path, _ := strings.Cut(rest, "/")
	parts := strings.Split(path, "/")
	if master == "" {
		master = parts[0]
		parts = parts[1:]
	}
	if master == "" || hosts == "" || len(parts) > 1 {
		return nil, fmt.Errorf("-redis %q: want redis-sentinel://host:port[,host:port]/MASTER[/DB]", address)
	}
	opts := &redis.FailoverOptions{MasterName: master, SentinelAddrs: strings.Split(hosts, ",")}
	if len(parts) == 1 && parts[0] != "" {
		if _, err := fmt.Sscanf(parts[0], "%d", &opts.DB); err != nil {
			return nil, fmt.Errorf("-redis %q: database %q is not a number", address, parts[0])
		}
	}
	if auth != "" {
		user, pass, _ := strings.Cut(auth, ":")
		var err error
		if opts.Username, err = url.PathUnescape(user); err != nil {
			return nil, err
		}
		if opts.Password, err = url.PathUnescape(pass); err != nil {
			return nil, err
		}
	}
	return opts, nil
}

// foundLock is a lock whose base key a scan met.
type foundLock struct {
	lock runtime.Lock
	name string // KIND:KEY
}

// scanLocks finds the base keys of every lock under prefix whose KEY
// matches pattern (a Redis glob), with SCAN ... COUNT on every master
// (never KEYS, which would stall the server on a large keyspace), and
// returns them sorted by name.
func (c *redisConn) scanLocks(ctx context.Context, prefix, pattern string) ([]foundLock, error) {
	match := globEscape(prefix) + "*:{" + pattern + "}"
	var mu sync.Mutex // ForEachMaster scans the masters at the same time
	seen := map[string]foundLock{}
	scanNode := func(ctx context.Context, node redis.UniversalClient) error {
		var cursor uint64
		for {
			keys, next, err := node.Scan(ctx, cursor, match, 1000).Result()
			if err != nil {
				return err
			}
			mu.Lock()
			for _, k := range keys {
				if f, ok := parseBaseKey(prefix, k); ok {
					seen[f.name] = f
				}
			}
			mu.Unlock()
			if cursor = next; cursor == 0 {
				return nil
			}
		}
	}
	var err error
	if c.cluster != nil {
		err = c.cluster.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error { return scanNode(ctx, node) })
	} else {
		err = scanNode(ctx, c.rdb)
	}
	if err != nil {
		return nil, fmt.Errorf("scan: %w", err)
	}
	out := make([]foundLock, 0, len(seen))
	for _, f := range seen {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

// parseBaseKey reads a lock's base key, prefix + family + ":{" + KEY + "}",
// as the lock its key family stands for (internal/family: "rw" the
// read/write lock as Write); the lock's other keys (a suffix after the
// brace) and keys of no lock family (a latch's) are not base keys.
func parseBaseKey(prefix, key string) (foundLock, bool) {
	rest, ok := strings.CutPrefix(key, prefix)
	if !ok || !strings.HasSuffix(rest, "}") {
		return foundLock{}, false
	}
	fam, tagged, ok := strings.Cut(rest, ":{")
	k := strings.TrimSuffix(tagged, "}")
	if !ok || k == "" || strings.ContainsAny(k, "{}") {
		return foundLock{}, false
	}
	f, ok := family.OfFamily(fam)
	if !ok {
		return foundLock{}, false
	}
	kind, err := runtime.ParseKind(f.Name)
	if err != nil {
		return foundLock{}, false
	}
	return foundLock{lock: runtime.Lock{Kind: kind, Key: k}, name: lockName(kind, k)}, true
}

// globEscape quotes the glob characters of a literal for SCAN MATCH.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
