package latch

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/internal/runtimelink"
	"github.com/lockgen/lockgen/lua"
	"github.com/lockgen/lockgen/runtime"
)

// ErrNoLatch: the latch does not exist: it was never set, or nobody used it
// for its TTL and it expired. CountDown returns it, and Await when the latch
// it was waiting for disappeared (or was set anew) without opening.
var ErrNoLatch = errors.New("lockgen: no such latch")

// Latch is a distributed CountDownLatch (Redisson's RCountDownLatch): it is
// set once to a count, parties count it down, and awaiters in every process
// return when the count reaches zero. Get one with New; it is a
// handle (no Redis call until an operation) and safe for concurrent use.
// Every operation is one script call; Await makes one per check.
//
// A latch is one-shot: once open it stays open, and TrySetCount fails on it,
// until it expires. Use a new key for each round ("migration:<run id>").
//
// TTL: every operation (TrySetCount, CountDown, Count, and the checks an
// Await makes at least every min(TTL/3, 5s)) restarts the latch's TTL, so a
// latch lives while it is used, an open one included (a late awaiter
// returns at once), and one nobody uses for a whole TTL disappears with
// every key. Lockers with different TTLs for one latch: the latest call's
// TTL counts.
//
// Idempotence: each count-down carries a party id, and a party counts once.
// CountDown draws a new id per call, so the client's own retries of that
// call (go-redis resends a command after a network error) count once; but a
// caller that calls CountDown again after an error may count twice. To
// retry safely, name the party: CountDownAs("shard-3") counts once however
// often it is called.
type Latch struct {
	l    runtimelink.LatchLink
	key  string
	keys []string // B, B:wake
	ttl  time.Duration
	err  error // a bad key or option, returned by every operation
}

// Option configures a Latch.
type Option func(*Latch)

// WithTTL sets how long a latch nobody uses lives (default 1h; 1ms to
// about 24 days).
func WithTTL(d time.Duration) Option { return func(lt *Latch) { lt.ttl = d } }

// defaultTTL is the TTL of a latch without WithTTL.
const defaultTTL = time.Hour

// latchRecheck bounds how long an awaiter goes without asking Redis, in
// case a wake message was lost: also what keeps an awaited latch alive.
const recheckEvery = 5 * time.Second

// New returns the latch named key on l: a rendered key like a Lock's
// (escaped values, no braces). Its Redis keys are l's prefix + "latch:{" +
// key + "}" and that plus ":wake", in one Cluster slot. An invalid key or
// option is returned by every operation (wrapping runtime.ErrInvalidKey or
// runtime.ErrInvalidLock).
func New(l *runtime.Locker, key string, opts ...Option) *Latch {
	lt := &Latch{l: runtimelink.Latch(l), key: key, ttl: defaultTTL}
	for _, o := range opts {
		o(lt)
	}
	base := lt.l.Prefix + "latch:{" + key + "}"
	lt.keys = []string{base, base + ":wake"}
	lt.err = lt.l.CheckKey(key)
	if lt.err == nil && (lt.ttl < time.Millisecond || lt.ttl > lt.l.MaxTTL) {
		lt.err = fmt.Errorf("%w: latch TTL %v outside 1ms..%v", runtime.ErrInvalidLock, lt.ttl, lt.l.MaxTTL)
	}
	return lt
}

// TrySetCount sets the count of a latch that does not exist and reports
// whether it did; false means a latch of that key exists (counting, or
// open), and only its TTL restarts. A retry of the same call by the client
// is recognised (the call's id is kept in the latch) and reports true
// again. count must be in 1..2^31.
func (lt *Latch) TrySetCount(ctx context.Context, count int64) (bool, error) {
	if lt.err != nil {
		return false, lt.err
	}
	if count < 1 || count > 1<<31 {
		return false, fmt.Errorf("%w: latch %s: count %d outside 1..2^31", runtime.ErrInvalidLock, lt.key, count)
	}
	reply, err := lt.call(ctx, lua.LatchSet, lt.l.NextHolder(), strconv.FormatInt(count, 10))
	if err != nil {
		return false, err
	}
	set, _, err := latchPair(reply)
	if err != nil {
		return false, lt.wrap(err)
	}
	return set == 1, nil
}

// CountDown counts the latch down by one and returns the count left (0:
// open, its awaiters released). See Latch for when it may count twice;
// CountDownAs never does. ErrNoLatch: no such latch (never set, or
// expired).
func (lt *Latch) CountDown(ctx context.Context) (int64, error) {
	return lt.countDown(ctx, lt.l.NextHolder())
}

// CountDownAs counts the latch down once for party: a party that has
// counted already (a retry after an error, a duplicate) leaves the count
// as it is. It returns the count left. party is 1..64 bytes of
// [A-Za-z0-9._:-]; ids the Locker draws for CountDown have a random
// 16-hex-digit prefix and a colon, so names without one cannot collide with
// them.
func (lt *Latch) CountDownAs(ctx context.Context, party string) (int64, error) {
	if err := lt.l.CheckParty(party); err != nil {
		return 0, fmt.Errorf("latch %s: party: %w", lt.key, err)
	}
	return lt.countDown(ctx, party)
}

func (lt *Latch) countDown(ctx context.Context, party string) (int64, error) {
	if lt.err != nil {
		return 0, lt.err
	}
	reply, err := lt.call(ctx, lua.LatchCountDown, party)
	if err != nil {
		return 0, err
	}
	left, ok := reply.(int64)
	switch {
	case !ok || left < -1:
		return 0, lt.wrap(fmt.Errorf("unexpected reply %#v", reply))
	case left == -1:
		return 0, lt.wrap(ErrNoLatch)
	}
	return left, nil
}

// Count returns the count left: 0 when the latch is open or does not exist
// (as Redisson's getCount).
func (lt *Latch) Count(ctx context.Context) (int64, error) {
	count, _, err := lt.count(ctx)
	return count, err
}

// count returns the count and the generation (0: no latch).
func (lt *Latch) count(ctx context.Context) (count, gen int64, err error) {
	if lt.err != nil {
		return 0, 0, lt.err
	}
	reply, err := lt.call(ctx, lua.LatchCount, lt.l.NextHolder())
	if err != nil {
		return 0, 0, err
	}
	count, gen, err = latchPair(reply)
	if err != nil {
		return 0, 0, lt.wrap(err)
	}
	return count, gen, nil
}

// call runs one latch script, bounded by ctx even if the client is not
// (runtimelink.LatchLink.Eval).
func (lt *Latch) call(ctx context.Context, s *lua.Script, id string, extra ...string) (any, error) {
	args := append([]string{id, strconv.FormatInt(lt.ttl.Milliseconds(), 10), lt.l.Publish}, extra...)
	reply, err := lt.l.Eval(ctx, backend.Call{Script: s, Keys: lt.keys, Args: args})
	if err != nil {
		return nil, lt.wrap(err)
	}
	return reply, nil
}

func (lt *Latch) wrap(err error) error {
	return fmt.Errorf("lockgen: latch %s: %w", lt.key, err)
}

// latchPair reads a {number, generation} reply.
func latchPair(reply any) (n, gen int64, err error) {
	if arr, ok := reply.([]any); ok && len(arr) == 2 {
		n, ok1 := arr[0].(int64)
		gen, ok2 := arr[1].(int64)
		if ok1 && ok2 {
			return n, gen, nil
		}
	}
	return 0, 0, fmt.Errorf("unexpected reply %#v", reply)
}

// Await returns once the latch is open. It returns at once if the count is
// 0 or the latch does not exist (as Redisson's await: set the count before
// the awaiters start, or check Count); otherwise when a count-down brings
// it to 0. The last count-down publishes one message, and every awaiter of
// every process is woken by it (the Locker's Pub/Sub connection hands it to
// all its awaiters of that latch). It does not poll: it checks Redis once
// more after subscribing, so that an opening in between is not missed, and
// then only on a message or, in case one was lost, at least every
// min(TTL/3, 5s), which also keeps an awaited latch alive.
//
// It returns ctx's cause when ctx ends first, an error wrapping ErrNoLatch
// when the latch it awaited expired or was replaced without opening,
// runtime.ErrClosed when the Locker closes, and the first error of a call
// to Redis.
func (lt *Latch) Await(ctx context.Context) error {
	count, gen, err := lt.count(ctx)
	if err != nil || count == 0 {
		return err
	}
	w := lt.l.Join(lt.keys[1])
	defer w.Leave()
	recheck := min(lt.ttl/3, recheckEvery)
	timer := time.NewTimer(recheck)
	defer timer.Stop()
	for {
		if !w.Subscribed() {
			sctx, cancel := context.WithTimeout(ctx, recheck)
			w.Subscribe(sctx) // on failure, the rechecks stand in
			cancel()
		}
		count, g, err := lt.count(ctx)
		switch {
		case err != nil:
			return err
		case g != gen:
			return lt.wrap(fmt.Errorf("%w: it expired or was set anew before it opened", ErrNoLatch))
		case count == 0:
			return nil
		}
		timer.Reset(recheck)
		select {
		case <-w.Wake:
		case <-timer.C:
		case <-ctx.Done():
			return lt.wrap(context.Cause(ctx))
		case <-lt.l.Closed:
			return lt.wrap(runtime.ErrClosed)
		}
	}
}
