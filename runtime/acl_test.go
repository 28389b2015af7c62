package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockgen/lockgen/redistest"
	"github.com/lockgen/lockgen/runtime"
	"github.com/redis/go-redis/v9"
)

// aclSingle is the minimal ACL of docs/acl.md for a single server or a
// Sentinel-managed master (without WithReplicas or WithRestartGuard).
var aclSingle = []string{
	"~lockgen:*", "&lockgen:*", "-@all",
	"+evalsha", "+eval", "+ping", "+subscribe", "+unsubscribe",
	"+get", "+set", "+del", "+pttl", "+pexpire", "+pexpireat", "+time",
	"+zadd", "+zrem", "+zrange", "+zrangebyscore", "+zscore", "+zpopmin", "+zcard",
	"+hset", "+hdel", "+hmget", "+publish",
}

// aclCluster is what Redis Cluster adds: sharded Pub/Sub (the scripts
// publish with SPUBLISH), the slot map go-redis reads, and COMMAND, which
// go-redis reads on Cluster (it works on without, logging a NOPERM).
var aclCluster = []string{"+spublish", "+ssubscribe", "+sunsubscribe", "+cluster|slots", "+command"}

// The ACL lines docs/acl.md gives are the ones tested here.
func TestACLDocumentedIsTested(t *testing.T) {
	doc, err := os.ReadFile("../docs/acl.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, rules := range [][]string{aclSingle, aclCluster} {
		if line := strings.Join(rules, " "); !strings.Contains(string(doc), line) {
			t.Errorf("docs/acl.md does not give the tested ACL:\n%s", line)
		}
	}
}

// A user limited to the key prefix and to aclSingle can use every kind:
// take it, wait for it (registration, queue, Pub/Sub wake-up and
// hand-over), keep it through renewals, and give it back.
func TestACLMinimalUserUsesEveryKind(t *testing.T) {
	srv := redistest.Start(t)
	ctx := ctxTimeout(t, 60*time.Second)
	o, err := srv.AddUser(ctx, "lockgen", "pw", aclSingle...)
	if err != nil {
		t.Fatal(err)
	}
	if err := useEveryKind(ctx, aclClient(t, o), aclClient(t, o)); err != nil {
		t.Error(err)
	}
}

// useEveryKind takes each kind with a, while b waits for it (with the
// exclusive side for read/write), holds it through renewals, gives it
// back, and reports the first thing that failed or was denied.
func useEveryKind(ctx context.Context, ca, cb redis.UniversalClient) error {
	var mu sync.Mutex
	var denied error
	renewed, busy := make(chan struct{}, 1), make(chan struct{}, 1)
	observe := runtime.WithObserver(func(e runtime.Event) {
		switch {
		case errors.Is(e.Err, runtime.ErrNoPermission):
			mu.Lock()
			denied = errors.Join(denied, e.Err)
			mu.Unlock()
		case e.Kind == runtime.EventRenewed:
			signal(renewed)
		case e.Kind == runtime.EventBusy:
			signal(busy)
		}
	})
	a := runtime.New(ca, observe)
	defer a.Close()
	b := runtime.New(cb, observe)
	defer b.Close()
	for _, lock := range []runtime.Lock{
		{Kind: runtime.Mutex, Key: "m"},
		{Kind: runtime.Fair, Key: "f"},
		{Kind: runtime.Read, Key: "rw"},
		{Kind: runtime.Write, Key: "rw"},
		{Kind: runtime.Semaphore, Key: "s", Permits: 1},
	} {
		lock.Lease, lock.Wait = 300*time.Millisecond, 5*time.Second
		drain(renewed)
		drain(busy)
		h, err := a.Acquire(ctx, lock)
		if err != nil {
			return fmt.Errorf("%v: %w", lock.Kind, err)
		}
		waiting := make(chan error, 1)
		go func() {
			excl := lock
			if excl.Kind == runtime.Read {
				excl.Kind = runtime.Write
			}
			h2, err := b.Acquire(ctx, excl)
			if err == nil {
				err = h2.Release()
			}
			waiting <- err
		}()
		// Held through a renewal, with the other Locker waiting.
		for _, ev := range []chan struct{}{renewed, busy} {
			select {
			case <-ev:
			case <-h.Context().Done():
			case <-time.After(5 * time.Second):
				return fmt.Errorf("%v: no renewal or no busy waiter within 5s", lock.Kind)
			}
		}
		lost := context.Cause(h.Context())
		err = errors.Join(lost, h.Release(), <-waiting)
		if err != nil {
			return fmt.Errorf("%v: %w", lock.Kind, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	return denied
}

// The same on a 3-master Cluster, with the rules Cluster adds.
func TestACLClusterUserUsesEveryKind(t *testing.T) {
	t.Parallel()
	cl := redistest.StartCluster(t, 3)
	ctx := ctxTimeout(t, 60*time.Second)
	o, err := cl.AddUser(ctx, "lockgen", "pw", append(append([]string(nil), aclSingle...), aclCluster...)...)
	if err != nil {
		t.Fatal(err)
	}
	ca, cb := redis.NewClusterClient(o), redis.NewClusterClient(o)
	defer ca.Close()
	defer cb.Close()
	if err := useEveryKind(ctx, ca, cb); err != nil {
		t.Error(err)
	}
}

// signal records an event in c (capacity 1) without blocking.
func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

func aclClient(t *testing.T, o *redis.Options) *redis.Client {
	c := redis.NewClient(o)
	t.Cleanup(func() { c.Close() })
	return c
}

// without returns aclSingle less the given rules.
func aclWithout(drop ...string) []string {
	var out []string
	for _, r := range aclSingle {
		keep := true
		for _, d := range drop {
			keep = keep && r != d
		}
		if keep {
			out = append(out, r)
		}
	}
	return out
}

// A NOPERM surfaces at once, naming the command: in an acquire, a release,
// a renewal (the holder's context is cancelled with it and EventLost
// carries it, long before the lease would end) and a waiter's SUBSCRIBE
// (the acquire fails rather than wait on its timers).
func TestACLDenialSurfacesAtOnce(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := ctxTimeout(t, 60*time.Second)
	full, err := srv.AddUser(ctx, "full", "pw", aclSingle...)
	if err != nil {
		t.Fatal(err)
	}
	isDenial := func(err error, cmd string) bool {
		return errors.Is(err, runtime.ErrNoPermission) && strings.Contains(err.Error(), "'"+cmd+"'")
	}

	t.Run("acquire", func(t *testing.T) {
		o, err := srv.AddUser(ctx, "noset", "pw", aclWithout("+set")...)
		if err != nil {
			t.Fatal(err)
		}
		l := runtime.New(aclClient(t, o))
		defer l.Close()
		start := time.Now()
		_, err = l.Acquire(ctx, runtime.Lock{Kind: runtime.Mutex, Key: "a", Wait: 5 * time.Second})
		if !isDenial(err, "set") {
			t.Fatalf("acquire without SET: %v, want ErrNoPermission naming set", err)
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("the denied acquire took %v (its wait was 5s)", took)
		}
	})

	t.Run("release", func(t *testing.T) {
		o, err := srv.AddUser(ctx, "shrinking", "pw", aclSingle...)
		if err != nil {
			t.Fatal(err)
		}
		l := runtime.New(aclClient(t, o))
		defer l.Close()
		h, err := l.Acquire(ctx, runtime.Lock{Kind: runtime.Mutex, Key: "r"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := srv.AddUser(ctx, "shrinking", "pw", aclWithout("+set")...); err != nil {
			t.Fatal(err)
		}
		if err := h.Release(); !isDenial(err, "set") {
			t.Errorf("release without SET: %v, want ErrNoPermission naming set", err)
		}
	})

	t.Run("renewal", func(t *testing.T) {
		o, err := srv.AddUser(ctx, "norenew", "pw", aclSingle...)
		if err != nil {
			t.Fatal(err)
		}
		lostEvents := make(chan error, 4)
		l := runtime.New(aclClient(t, o), runtime.WithObserver(func(e runtime.Event) {
			if e.Kind == runtime.EventLost {
				lostEvents <- e.Err
			}
		}))
		defer l.Close()
		const lease = 6 * time.Second
		h, err := l.Acquire(ctx, runtime.Lock{Kind: runtime.Mutex, Key: "n", Lease: lease})
		if err != nil {
			t.Fatal(err)
		}
		defer h.Release()
		start := time.Now()
		if _, err := srv.AddUser(ctx, "norenew", "pw", aclWithout("+pexpire")...); err != nil {
			t.Fatal(err)
		}
		select {
		case <-h.Context().Done():
		case <-time.After(lease):
			t.Fatalf("holder not told within the lease %v", lease)
		}
		// The first renewal is due at lease/3 (2 s); a denial retried
		// silently would end the hold only at the lease's end.
		if took := time.Since(start); took > lease*2/3 {
			t.Errorf("holder cancelled %v after the denial, want about lease/3 (%v)", took, lease/3)
		}
		cause := context.Cause(h.Context())
		if !errors.Is(cause, runtime.ErrLockLost) || !isDenial(cause, "pexpire") {
			t.Errorf("cause %v, want ErrLockLost and ErrNoPermission naming pexpire", cause)
		}
		if err := <-lostEvents; !isDenial(err, "pexpire") {
			t.Errorf("EventLost.Err = %v, want ErrNoPermission naming pexpire", err)
		}
	})

	t.Run("subscribe", func(t *testing.T) {
		o, err := srv.AddUser(ctx, "nosub", "pw", aclWithout("+subscribe")...)
		if err != nil {
			t.Fatal(err)
		}
		holder := runtime.New(aclClient(t, full))
		defer holder.Close()
		h, err := holder.Acquire(ctx, runtime.Lock{Kind: runtime.Mutex, Key: "s"})
		if err != nil {
			t.Fatal(err)
		}
		defer h.Release()
		l := runtime.New(aclClient(t, o))
		defer l.Close()
		start := time.Now()
		_, err = l.Acquire(ctx, runtime.Lock{Kind: runtime.Mutex, Key: "s", Wait: 10 * time.Second})
		if !isDenial(err, "subscribe") {
			t.Fatalf("waiter without SUBSCRIBE: %v, want ErrNoPermission naming subscribe", err)
		}
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("the waiter failed after %v (its wait was 10s)", took)
		}
	})
}
