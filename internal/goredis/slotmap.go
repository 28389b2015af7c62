package goredis

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockgen/lockgen/internal/keyslot"
)

// The backend keeps its own copy of the Cluster's slot map, reloaded
// whenever a call had to follow its slot, a subscription was ended by the
// server, or a master's connection dropped. Every reload compares the
// masters that serve each slot with the map it had, and tells the
// watchers (Caps.WatchMasters) which keys now live on another master, so that
// the locks held there are verified at once.

// topologyPoll is the pause between two reloads of the slot map while a
// node the backend had a connection to is unreachable (watchTopology).
const topologyPoll = 100 * time.Millisecond

// slotOwners is what the backend last saw of the Cluster's slot map: the
// master of every slot range, to tell which slots changed masters.
type slotOwners struct {
	sem      chan struct{} // one reload at a time
	loadedAt time.Time     // when the last reload that succeeded started; under sem

	mu       sync.Mutex
	ranges   []redis.ClusterSlot
	watchers []func(affects func(key string) bool)
	watching map[string]bool // unreachable nodes being watched (watchTopology)
}

func newSlotOwners() *slotOwners {
	return &slotOwners{sem: make(chan struct{}, 1), watching: map[string]bool{}}
}

// slotsAskTimeout bounds the CLUSTER SLOTS sent to one master: a master
// that does not answer in time is skipped for the next.
const slotsAskTimeout = 500 * time.Millisecond

// clientReloadTimeout bounds go-redis's own reload of its slot map, which
// asks the nodes one at a time in random order, and spends up to a few
// seconds of dial retries on a dead one before it asks the next. Past it,
// go-redis keeps the map it had, and the next reload tries another order.
const clientReloadTimeout = 300 * time.Millisecond

// reloadSlots makes the cluster client load the slot map now, bounded by
// ctx, and tells the watchers about slots that changed masters. Callers
// that ask while a reload runs wait for it and then reload only if it
// started before they asked. ClusterClient.ReloadState only schedules a
// reload in the background; ForEachMaster reloads the map first and
// returns once it has.
func (b *goRedisBackend) reloadSlots(ctx context.Context) error {
	asked := time.Now()
	so := b.slots
	select {
	case so.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-so.sem }()
	if so.loadedAt.After(asked) {
		return nil
	}
	started := time.Now()
	masters, err := b.clientMasters(ctx)
	if err != nil {
		return err
	}
	// go-redis keeps its map to itself: ask the masters it now knows for
	// theirs, all at once, and take the first answer, so that a master
	// that is down costs nothing.
	ranges, err := firstSlotsAnswer(ctx, masters)
	if err != nil {
		return err
	}
	// A reload of go-redis cut short keeps its old map, whose calls would
	// still go to a dead master: reload it again, a few times, until it
	// has the masters the answer names.
	for try := 0; try < 3 && !sameMasters(masters, ranges) && ctx.Err() == nil; try++ {
		if masters, err = b.clientMasters(ctx); err != nil {
			return err
		}
	}
	b.slotsStale.Store(!sameMasters(masters, ranges))
	so.loadedAt = started
	b.setRanges(ranges)
	b.watchNodes(masters)
	return nil
}

// clientMasters makes go-redis reload its slot map (ForEachMaster does,
// first thing), within clientReloadTimeout, and returns its masters.
func (b *goRedisBackend) clientMasters(ctx context.Context) ([]*redis.Client, error) {
	ctx, cancel := context.WithTimeout(ctx, clientReloadTimeout)
	defer cancel()
	var mu sync.Mutex
	var masters []*redis.Client
	err := b.cluster.ForEachMaster(ctx, func(_ context.Context, c *redis.Client) error {
		mu.Lock()
		masters = append(masters, c)
		mu.Unlock()
		return nil
	})
	return masters, err
}

// sameMasters reports whether the masters of a slot map are those of
// go-redis's.
func sameMasters(clients []*redis.Client, ranges []redis.ClusterSlot) bool {
	have := map[string]bool{}
	for _, c := range clients {
		have[c.Options().Addr] = true
	}
	want := map[string]bool{}
	for _, r := range ranges {
		if len(r.Nodes) > 0 {
			want[r.Nodes[0].Addr] = true
		}
	}
	if len(have) != len(want) {
		return false
	}
	for addr := range want {
		if !have[addr] {
			return false
		}
	}
	return true
}

// firstSlotsAnswer sends CLUSTER SLOTS to every master and returns the
// first answer, or the last error if none answers within slotsAskTimeout.
func firstSlotsAnswer(ctx context.Context, masters []*redis.Client) ([]redis.ClusterSlot, error) {
	if len(masters) == 0 {
		return nil, errors.New("no master to ask for the slot map")
	}
	ctx, cancel := context.WithTimeout(ctx, slotsAskTimeout)
	defer cancel() // the others stop once one has answered
	type answer struct {
		ranges []redis.ClusterSlot
		err    error
	}
	answers := make(chan answer, len(masters))
	for _, m := range masters {
		go func() {
			ranges, err := m.ClusterSlots(ctx).Result()
			answers <- answer{ranges, err}
		}()
	}
	var err error
	for range masters {
		a := <-answers
		if a.err == nil {
			return a.ranges, nil
		}
		err = a.err
	}
	return nil, err
}

// setRanges records a new slot map and tells the watchers which keys
// changed masters, if any did.
func (b *goRedisBackend) setRanges(after []redis.ClusterSlot) {
	so := b.slots
	so.mu.Lock()
	before := so.ranges
	so.ranges = after
	so.mu.Unlock()
	if before == nil {
		return
	}
	moved := movedSlots(before, after)
	if len(moved) == 0 {
		return
	}
	so.tell(func(key string) bool { return moved[keyslot.Of(key)] })
}

// tell tells every watcher that the keys affects reports changed masters.
func (so *slotOwners) tell(affects func(key string) bool) {
	so.mu.Lock()
	watchers := append([](func(func(string) bool))(nil), so.watchers...)
	so.mu.Unlock()
	for _, w := range watchers {
		w(affects)
	}
}

// movedSlots returns the slots whose master differs between two maps.
func movedSlots(before, after []redis.ClusterSlot) map[int]bool {
	moved := map[int]bool{}
	for slot := range 16384 {
		if ownerOf(before, slot) != ownerOf(after, slot) {
			moved[slot] = true
		}
	}
	return moved
}

// ownerOf returns the master's address of slot in ranges, "" if none.
func ownerOf(ranges []redis.ClusterSlot, slot int) string {
	for _, r := range ranges {
		if int(r.Start) <= slot && slot <= int(r.End) && len(r.Nodes) > 0 {
			return r.Nodes[0].Addr
		}
	}
	return ""
}

// watchMasters is the backend's Caps.WatchMasters. It needs no channel of
// its own, so prefix is not used.
func (b *goRedisBackend) watchMasters(_ string, changed func(affects func(key string) bool)) {
	b.slots.mu.Lock()
	b.slots.watchers = append(b.slots.watchers, changed)
	b.slots.mu.Unlock()
	if b.cluster == nil {
		b.watchServer()
		return
	}
	// The map to compare the first change with.
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), followLimit)
		defer cancel()
		_ = b.reloadSlots(ctx)
	}()
}

// watchNodes keeps a Pub/Sub connection open to every master, once a
// watchdog watches them: the node subscriber of a master that dies sees
// its connection drop at once (watchTopology), even when no call to that
// master is due, and the locks held there are verified as soon as its
// replica takes over rather than at their next renewal.
func (b *goRedisBackend) watchNodes(masters []*redis.Client) {
	b.slots.mu.Lock()
	watched := len(b.slots.watchers) > 0
	b.slots.mu.Unlock()
	if !watched {
		return
	}
	live := map[string]bool{}
	for _, m := range masters {
		addr := m.Options().Addr
		live[addr] = true
		b.watchNodeRestarts(m) // a node go-redis made before the backend was
		b.subscriber(m, addr)
	}
	b.dropIdleSubscribers(live)
}

// dropIdleSubscribers closes the node subscribers of nodes that are not
// masters any more and carry no channel, such as that of a master that
// died and was replaced, which would otherwise redial it forever.
func (b *goRedisBackend) dropIdleSubscribers(masters map[string]bool) {
	var idle []*nodeSubscriber
	b.mu.Lock()
	for addr, ns := range b.nodes {
		if !masters[addr] && ns.idle() {
			delete(b.nodes, addr)
			idle = append(idle, ns)
		}
	}
	b.mu.Unlock()
	for _, ns := range idle {
		go ns.close()
	}
}

// watchTopology reloads the slot map every topologyPoll after the
// connection to the node at addr was lost, until addr serves no slot any
// more (its replica was promoted) or followLimit has passed, so that the
// locks held on a master that died are verified on its replica as soon
// as it is promoted, even if no call is made meanwhile. One watch per
// node at a time.
func (b *goRedisBackend) watchTopology(addr string) {
	so := b.slots
	so.mu.Lock()
	if b.cluster == nil || so.watching[addr] {
		so.mu.Unlock()
		return
	}
	so.watching[addr] = true
	so.mu.Unlock()
	go func() {
		defer func() {
			so.mu.Lock()
			delete(so.watching, addr)
			so.mu.Unlock()
		}()
		ctx, cancel := context.WithTimeout(context.Background(), followLimit)
		defer cancel()
		for ctx.Err() == nil && !b.closing() {
			if err := b.reloadSlots(ctx); err == nil && !b.servesSlots(addr) {
				return
			}
			select {
			case <-ctx.Done():
			case <-time.After(topologyPoll):
			}
		}
	}()
}

// servesSlots reports whether addr masters any slot in the last map seen.
func (b *goRedisBackend) servesSlots(addr string) bool {
	b.slots.mu.Lock()
	defer b.slots.mu.Unlock()
	for _, r := range b.slots.ranges {
		if len(r.Nodes) > 0 && r.Nodes[0].Addr == addr {
			return true
		}
	}
	return false
}
