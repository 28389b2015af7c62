package faults

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/goredisbackend"
	"github.com/lockgen/lockgen/lua"
	"github.com/lockgen/lockgen/redistest"
	"github.com/lockgen/lockgen/runtime"
)

// (i) A holder cut off from Redis by a blackhole (its renewals neither
// arrive nor fail) must have its context cancelled before any other client
// is granted the lock, which happens once the lease runs out in Redis. The
// margin of a trial is the other client's grant time minus the holder's
// cancel time; every margin must be positive.
//
// The grant time is Redis's clock at the grant, read back from the lock
// key's absolute expiry (the grant set it to the lease plus the fence floor;
// the server's clock is the test's on one host), if it falls between the
// sending of the granted attempt and its reply; otherwise, on the safe
// side, the sending of that attempt. The
// cancel time is when the holder's Locker reported the loss (EventLost,
// right after it cancelled the context).
//
// Several keys, each with its own holder and proxy, run at once. The case
// does not run in parallel with the others: its margins are tens of
// milliseconds, and the suite's own load should not eat into them.
func TestBlackholedHolderIsToldFirst(t *testing.T) {
	const rounds, keys = 3, 12
	const lease = 2 * time.Second
	e := newEnv(t)
	var margins []time.Duration
	for r := range rounds {
		margins = append(margins, blackholeRound(t, e, r, keys, lease)...)
	}
	slices.Sort(margins)
	pct := func(p int) time.Duration { return margins[(len(margins)-1)*p/100] }
	t.Logf("(i) blackholed holder, lease %v, %d trials: margin (other's grant - holder's cancel) min %v p50 %v p90 %v max %v",
		lease, len(margins), margins[0].Round(time.Microsecond), pct(50).Round(time.Microsecond), pct(90).Round(time.Microsecond), margins[len(margins)-1].Round(time.Microsecond))
	if len(margins) < 30 {
		t.Errorf("%d trials; want at least 30", len(margins))
	}
	if bad := slices.IndexFunc(margins, func(m time.Duration) bool { return m > 0 }); bad != 0 {
		if bad < 0 {
			bad = len(margins)
		}
		t.Errorf("(i) %d of %d trials: another client was granted the lock before the cut-off holder's context was cancelled (margins %v)", bad, len(margins), margins[:bad])
	}
}

type blackholeTrial struct {
	proxy  *redistest.Proxy
	holder *subject
	clock  *sendClock
	other  <-chan outcome
}

// blackholeRound runs one trial per key at once and returns the margins.
func blackholeRound(t *testing.T, e *env, round, keys int, lease time.Duration) []time.Duration {
	trials := make([]blackholeTrial, keys)
	for i := range trials {
		tr := &trials[i]
		key := fmt.Sprintf("blackhole-%d-%d", round, i)
		tr.proxy = redistest.StartProxy(t, e.srv.Addr)
		tr.holder = e.locker(e.client(tr.proxy.Addr, nil), "ih")
		h := acquire(ctxFor(t, 10*time.Second), tr.holder, runtime.Lock{Kind: runtime.Mutex, Key: key, Lease: lease})
		if h.err != nil {
			t.Fatal(h.err)
		}
		tr.clock = &sendClock{Backend: goredisbackend.New(e.client(e.srv.Addr, nil))}
		other := e.lockerOn(tr.clock, "io")
		tr.other = acquireAsync(ctxFor(t, 30*time.Second), other, runtime.Lock{Kind: runtime.Mutex, Key: key, Lease: 10 * time.Second})
		other.ev.wait(t, runtime.EventBusy, "", 10*time.Second)
	}
	// Cut the holders off one after the other across a renewal period, so
	// that their last renewals fall at different points of it.
	for i := range trials {
		trials[i].proxy.SetMode(redistest.Blackhole())
		time.Sleep(lease / 3 / time.Duration(keys))
	}
	margins := make([]time.Duration, 0, keys)
	for i := range trials {
		tr := &trials[i]
		lost, ok := tr.holder.ev.waitFor(runtime.EventLost, "", 3*lease)
		if !ok {
			t.Fatalf("round %d key %d: the blackholed holder's context was not cancelled within %v", round, i, 3*lease)
		}
		o := await(t, tr.other, 3*lease, "the other client")
		if o.err != nil {
			t.Fatalf("round %d key %d: the other client: %v", round, i, o.err)
		}
		granted, fromServer := grantTime(e, o, tr.clock.lastSent(), tr.clock.lastKey(), 10*time.Second)
		if !fromServer {
			t.Logf("round %d key %d: the key's expiry gives no server time within the granted attempt; margin counted from the attempt's sending", round, i)
		}
		margins = append(margins, granted.Sub(lost.at))
		if err := o.held.Release(); err != nil {
			t.Errorf("round %d key %d: the other client's release: %v", round, i, err)
		}
	}
	return margins
}

// grantTime is when Redis granted o: read from the server clock as the
// lock key's absolute expiry (PEXPIRETIME, ms) less the lease and the
// fence floor the grant set it to, if that falls between the sending of
// the granted attempt (to the ms) and the return of Acquire; else the
// sending. (Fences count on from the last one, so they no longer tell the
// time.)
func grantTime(e *env, o outcome, sent time.Time, key string, lease time.Duration) (at time.Time, fromServer bool) {
	exp, err := e.direct.PExpireTime(context.Background(), key).Result()
	if err == nil && exp > 0 {
		at := time.UnixMilli(0).Add(exp - lease - lua.FenceFloor)
		if !at.Before(sent.Truncate(time.Millisecond)) && !at.After(o.returned) {
			return at, true
		}
	}
	return sent, false
}

// sendClock is a Backend that remembers when the latest script call was
// sent.
type sendClock struct {
	backend.Backend
	mu   sync.Mutex
	last time.Time
	key  string
}

func (c *sendClock) mark(call backend.Call) {
	c.mu.Lock()
	c.last = time.Now()
	if len(call.Keys) > 0 {
		c.key = call.Keys[0]
	}
	c.mu.Unlock()
}

// lastKey is the lock key (KEYS[1]) of the latest script call.
func (c *sendClock) lastKey() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.key
}

func (c *sendClock) lastSent() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}

func (c *sendClock) Eval(ctx context.Context, call backend.Call) (any, error) {
	c.mark(call)
	return c.Backend.Eval(ctx, call)
}

func (c *sendClock) EvalWait(ctx context.Context, call backend.Call, replicas int, timeout time.Duration) (any, int, error) {
	c.mark(call)
	return c.Backend.EvalWait(ctx, call, replicas, timeout)
}
