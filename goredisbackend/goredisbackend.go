// Package goredisbackend puts the lockgen runtime on a go-redis v9 client:
// it is the Backend (package backend) that runtime.New builds, for a
// caller who wants it by itself (to wrap it, to hand it to quorum or
// fencing, to run backendtest on it) and then runtime.NewWithBackend.
//
// Its guarantees, on a single server, a Sentinel failover client or a
// Cluster: every call is bounded by its context and by the client's own
// timeouts and retries, which it states in Caps.CallBound; a script is
// sent by EVALSHA and, on NOSCRIPT, by EVAL once; concurrent calls share
// pipelines without making a lone call wait; a call on a Cluster follows
// its slot when it moves; Pub/Sub wake-ups use one connection per node and
// deliver "all" after a reconnection; a failover, a restart without data
// or a moved slot is reported through Caps.WatchMasters at once; and a
// connection the client closes is reset, so that nothing a call abandoned
// had sent can reach Redis after the call returned.
package goredisbackend

import (
	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/internal/goredis"
	"github.com/redis/go-redis/v9"
)

// New returns the Backend runtime.New uses: rdb may be a single-node
// client, a Sentinel failover client (both *redis.Client) or a
// *redis.ClusterClient. On a Cluster wake channels are shard channels
// (SSUBSCRIBE/SPUBLISH), one Pub/Sub connection per master; elsewhere one
// Pub/Sub connection carries every channel. A *redis.Ring is not
// supported: its sharding is not visible to the scripts' hash tags.
//
// On a *redis.Client it adds a hook that reads the server's run_id after
// each new connection, to notice a failover or a restart at once; the hook
// stays on the client after Close, and does nothing then: make one backend
// per client, not one per use. It also makes the connections the client
// dials from then on close with a reset (SO_LINGER 0); on a Cluster
// client, the connections of node clients made from then on.
//
// Close ends its subscriptions; the client stays the caller's to close.
func New(rdb redis.UniversalClient) backend.Backend {
	return goredis.New(rdb)
}
