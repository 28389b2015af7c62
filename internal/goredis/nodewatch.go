package goredis

import (
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/lockgen/lockgen/internal/keyslot"
)

// A Cluster master that restarts empty at its address keeps its slots: its
// nodes.conf says they are its own, so the slot map does not change and
// the slot-map diff (slotmap.go) sees nothing, yet every lock it held is
// gone and it grants them again. So each node's run_id is watched as the
// one server's is (serverwatch.go): read after each new connection to the
// node (a pooled one redialled after the old ones broke, or the node
// subscriber's redial, which the backend keeps open on every master once
// a watchdog watches), and on a change every held lock whose key hashes to
// a slot of that node is verified at once.

// nodeRestarts holds the run_id watch of each Cluster node, by address, so
// that a node client go-redis makes anew for an address keeps its history.
type nodeRestarts struct {
	mu      sync.Mutex
	byAddr  map[string]*serverWatch
	clients map[*redis.Client]bool // node clients that carry the hook
}

// watchNodeRestarts hooks the node client c (once) and checks its run_id
// now, so that the run_id before a restart is known. go-redis calls it for
// every node client it makes (OnNewNode); watchNodes calls it for the
// masters too, for node clients made before the backend was.
func (b *goRedisBackend) watchNodeRestarts(c *redis.Client) {
	addr := c.Options().Addr
	r := &b.restarts
	r.mu.Lock()
	if r.clients[c] {
		r.mu.Unlock()
		return
	}
	if r.byAddr == nil {
		r.byAddr, r.clients = map[string]*serverWatch{}, map[*redis.Client]bool{}
	}
	r.clients[c] = true
	w := r.byAddr[addr]
	if w == nil {
		w = &serverWatch{b: b, rdb: c, stop: b.stop, changed: func(bool) { b.nodeRestarted(addr) }}
		r.byAddr[addr] = w
	}
	r.mu.Unlock()
	w.useClient(c)
	c.AddHook(w)
	w.dialed()
}

// nodeRestarted tells the watchers that the locks on the slots of the node
// at addr may be gone: all of them if the slot map is not known yet.
func (b *goRedisBackend) nodeRestarted(addr string) {
	so := b.slots
	so.mu.Lock()
	known := so.ranges != nil
	slots := map[int]bool{}
	for _, r := range so.ranges {
		if len(r.Nodes) > 0 && r.Nodes[0].Addr == addr {
			for slot := int(r.Start); slot <= int(r.End); slot++ {
				slots[slot] = true
			}
		}
	}
	so.mu.Unlock()
	switch {
	case !known:
		so.tell(func(string) bool { return true })
	case len(slots) > 0: // a replica's restart loses no lock
		so.tell(func(key string) bool { return slots[keyslot.Of(key)] })
	}
}
