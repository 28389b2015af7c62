package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// On a Cluster, a call follows its slot: when the node it went to no
// longer serves the slot (MOVED, ASK, a node demoted to replica), cannot
// serve it now (CLUSTERDOWN, TRYAGAIN, LOADING), or cannot be reached (a
// master killed, not yet replaced), the backend reloads the slot map at
// once and sends the call again, with a short pause that doubles, until
// the call gets an answer, its context ends or followLimit has passed.
// go-redis itself follows a MOVED a few times, but reloads the map only in
// the background and never on a dial error: after a master dies, it sends
// to the dead address until its periodic reload, a minute later.
//
// Sending a call again is safe: every script is idempotent (an acquire
// that finds the lock held by its caller's holder id only restarts the
// lease; a release that finds it not held changes nothing), so a call whose
// first attempt ran after all does no harm when it runs again.
//
// Every reload compares the masters that serve each slot with the map it
// had, and tells the watchers (masterWatcher) which keys now live on
// another master, so that the locks held there are verified at once.

// followLimit bounds how long a call follows its slot when its context
// allows longer: the failure detection and election of a Cluster with the
// default node timeout (15 s) take about that long.
const followLimit = 20 * time.Second

// topologyPoll is the pause between two reloads of the slot map while a
// node the backend had a connection to is unreachable (watchTopology).
const topologyPoll = 100 * time.Millisecond

// lostRoute reports whether err says that the call did not reach the
// slot's master, or reached a node that does not serve it now, so that
// it is worth sending again after a reload of the slot map.
func lostRoute(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	// A dial that timed out wraps DeadlineExceeded too; it is a node that
	// cannot be reached, not the caller's deadline.
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	for _, prefix := range []string{"MOVED", "ASK", "TRYAGAIN", "CLUSTERDOWN", "LOADING", "READONLY", "MASTERDOWN"} {
		if redis.HasErrorPrefix(err, prefix) {
			return true
		}
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, redis.ErrClosed)
}

// isMoved reports whether err is a redirection, which needs no pause
// before the call is sent again to the node it names.
func isMoved(err error) bool {
	_, moved := redis.IsMovedError(err)
	return moved
}

// follow runs attempt until it returns an error that is not lostRoute, on
// a Cluster; elsewhere it runs it once. Between two attempts it reloads the
// slot map.
func (b *goRedisBackend) follow(ctx context.Context, attempt func(context.Context) error) error {
	err := attempt(ctx)
	if b.cluster == nil {
		return err
	}
	giveUp := time.Now().Add(followLimit)
	pause := slotRetryPauseMin
	for n := 0; lostRoute(err); n++ {
		if !b.followPause(ctx, giveUp, err, n, &pause) {
			return err
		}
		routeErr := err
		if err = attempt(ctx); ctx.Err() != nil && err != nil && !lostRoute(err) {
			// Say why the call did not get through, not only that it
			// ran out of time.
			return fmt.Errorf("%w; the slot's master was not reached: %w", err, routeErr)
		}
	}
	return err
}

// followPause reloads the slot map after the n-th failed attempt, whose
// error was err, and pauses before the next (not after a first MOVED).
// It reports false when ctx or giveUp leaves no time for another attempt.
func (b *goRedisBackend) followPause(ctx context.Context, giveUp time.Time, err error, n int, pause *time.Duration) bool {
	if ctx.Err() != nil || time.Now().After(giveUp) {
		return false
	}
	if rerr := b.reloadSlots(ctx); rerr != nil {
		b.slotsStale.Store(true)
	}
	if n == 0 && isMoved(err) {
		return true
	}
	select {
	case <-ctx.Done():
		return false
	case <-time.After(*pause):
	}
	*pause = min(2**pause, slotRetryPauseMax)
	return true
}

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
	var mu sync.Mutex
	var masters []*redis.Client
	err := b.cluster.ForEachMaster(ctx, func(_ context.Context, c *redis.Client) error {
		mu.Lock()
		masters = append(masters, c)
		mu.Unlock()
		return nil
	})
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
	b.slotsStale.Store(false)
	so.loadedAt = started
	b.setRanges(ranges)
	b.watchNodes(masters)
	return nil
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
	so.tell(func(key string) bool { return moved[clusterSlot(key)] })
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

// watchMasters implements masterWatcher.
func (b *goRedisBackend) watchMasters(changed func(affects func(key string) bool)) {
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
