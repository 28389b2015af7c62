package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"github.com/lockgen/lockgen/redistest"
	"github.com/lockgen/lockgen/runtime"
	"github.com/redis/go-redis/v9"
)

// holderNamed makes a Locker's holder ids "<name>", "<name>-2", ...: each
// Acquire gets its own, and Inspect shows who is who.
func holderNamed(name string) runtime.Option {
	n := 0
	return runtime.WithHolderIDs(func() string {
		n++
		if n == 1 {
			return name
		}
		return fmt.Sprintf("%s-%d", name, n)
	})
}

// busyOption is busySignal (pubsub_test.go) as a Locker option.
func busyOption() (runtime.Option, <-chan struct{}) {
	o, ch := busySignal()
	return runtime.WithObserver(o), ch
}

// waitFor starts Acquire of lk on l in the background and returns once it
// got its first busy reply; the result comes on the channel.
func waitFor(t *testing.T, ctx context.Context, l *runtime.Locker, busy <-chan struct{}, lk runtime.Lock) <-chan acquired {
	t.Helper()
	out := make(chan acquired, 1)
	go func() {
		h, err := l.Acquire(ctx, lk)
		out <- acquired{h, err, time.Now()}
	}()
	select {
	case <-busy:
	case r := <-out:
		t.Fatalf("%v %q: want a busy waiter, got %v %v", lk.Kind, lk.Key, r.h, r.err)
	case <-ctx.Done():
		t.Fatal("no busy reply")
	}
	return out
}

func mustAcquire(t *testing.T, ctx context.Context, l *runtime.Locker, lk runtime.Lock) (*runtime.Held, int64) {
	t.Helper()
	h, err := l.Acquire(ctx, lk)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Release() })
	f, _ := runtime.Fence(h.Context())
	return h, f
}

func mustInspect(t *testing.T, ctx context.Context, l *runtime.Locker, lk runtime.Lock) runtime.LockState {
	t.Helper()
	st, err := l.Inspect(ctx, lk)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// checkHolders compares st's holders with want (id, kind, fence) and
// checks that each lease left lies in (0, lease].
func checkHolders(t *testing.T, st runtime.LockState, lease time.Duration, want ...runtime.HolderState) {
	t.Helper()
	if len(st.Holders) != len(want) {
		t.Fatalf("holders %+v, want %+v", st.Holders, want)
	}
	for i, h := range st.Holders {
		w := want[i]
		if h.ID != w.ID || h.Kind != w.Kind || h.Fence != w.Fence {
			t.Errorf("holder %d: %+v, want %+v", i, h, w)
		}
		if h.LeaseLeft <= 0 || h.LeaseLeft > lease {
			t.Errorf("holder %s: lease left %v, want in (0, %v]", h.ID, h.LeaseLeft, lease)
		}
	}
}

// lostWithin waits until h's context is cancelled with ErrLockLost.
func lostWithin(t *testing.T, h *runtime.Held, d time.Duration) {
	t.Helper()
	select {
	case <-h.Context().Done():
	case <-time.After(d):
		t.Fatalf("holder's context not cancelled within %v of the forced release", d)
	}
	if cause := context.Cause(h.Context()); !errors.Is(cause, runtime.ErrLockLost) {
		t.Errorf("cause %v, want ErrLockLost", cause)
	}
}

// gotLock waits for a waiter's result and checks that its fence lies
// above floor.
func gotLock(t *testing.T, res <-chan acquired, floor int64) *runtime.Held {
	t.Helper()
	r := <-res // the waiter's own Wait bounds this
	if r.err != nil {
		t.Fatalf("waiter: %v", r.err)
	}
	t.Cleanup(func() { _ = r.h.Release() })
	if f, _ := runtime.Fence(r.h.Context()); f <= floor {
		t.Errorf("waiter's fence %d not above the removed holder's %d", f, floor)
	}
	return r.h
}

// A mutex: Inspect shows the holder with its fence and lease, and the
// registered waiter; ForceRelease removes the holder whatever its id, the
// waiter gets the lock at once with a higher fence, and the holder's
// watchdog cancels its context at its next renewal.
func TestInspectAndForceReleaseMutex(t *testing.T) {
	t.Parallel()
	forEachTarget(t, func(t *testing.T, tg target) {
		ctx := ctxTimeout(t, 30*time.Second)
		const lease = 6 * time.Second
		lk := runtime.Lock{Kind: runtime.Mutex, Key: "ops:mutex", Lease: lease}
		opt, busy := busyOption()
		la, lb, op := tg.newLocker(t, holderNamed("A")), tg.newLocker(t, holderNamed("B"), opt), tg.newLocker(t)

		st := mustInspect(t, ctx, op, lk)
		if st.Held() || len(st.Waiters) != 0 || st.LastFence != 0 {
			t.Fatalf("free lock: %+v", st)
		}
		ha, fa := mustAcquire(t, ctx, la, lk)
		wait := lk
		wait.Wait = 20 * time.Second
		res := waitFor(t, ctx, lb, busy, wait)

		st = mustInspect(t, ctx, op, lk)
		checkHolders(t, st, lease, runtime.HolderState{ID: "A", Kind: runtime.Mutex, Fence: fa})
		if len(st.Waiters) != 1 || st.Waiters[0].ID != "B" || st.Waiters[0].Left <= 0 {
			t.Errorf("waiters %+v, want B registered", st.Waiters)
		}
		if st.LastFence != fa || st.Base == "" || st.Key != lk.Key {
			t.Errorf("state %+v: want last fence %d, base and key", st, fa)
		}

		forced := time.Now()
		if n, err := op.ForceRelease(ctx, lk); err != nil || n != 1 {
			t.Fatalf("ForceRelease = %d, %v; want 1", n, err)
		}
		hb := gotLock(t, res, fa)
		// Woken by the release, not by the end of A's lease.
		if took := time.Since(forced); took > lease/2 {
			t.Errorf("waiter got the lock %v after the forced release; want well within the lease %v", took, lease)
		}
		lostWithin(t, ha, lease)
		fb, _ := runtime.Fence(hb.Context())
		checkHolders(t, mustInspect(t, ctx, op, lk), lease, runtime.HolderState{ID: "B", Kind: runtime.Mutex, Fence: fb})
		if n, err := op.ForceRelease(ctx, runtime.Lock{Kind: runtime.Mutex, Key: "ops:nobody"}); err != nil || n != 0 {
			t.Errorf("ForceRelease of a free lock = %d, %v; want 0", n, err)
		}
	})
}

// A fair lock: Inspect lists the queue in arrival order; ForceRelease
// hands the lock to its head.
func TestInspectAndForceReleaseFair(t *testing.T) {
	t.Parallel()
	forEachTarget(t, func(t *testing.T, tg target) {
		ctx := ctxTimeout(t, 30*time.Second)
		const lease = 3 * time.Second
		lk := runtime.Lock{Kind: runtime.Fair, Key: "ops:fair", Lease: lease, Wait: 20 * time.Second}
		optB, busyB := busyOption()
		optC, busyC := busyOption()
		la, lb, lc := tg.newLocker(t, holderNamed("A")), tg.newLocker(t, holderNamed("B"), optB), tg.newLocker(t, holderNamed("C"), optC)

		ha, fa := mustAcquire(t, ctx, la, lk)
		resB := waitFor(t, ctx, lb, busyB, lk)
		resC := waitFor(t, ctx, lc, busyC, lk)
		st := mustInspect(t, ctx, la, lk)
		checkHolders(t, st, lease, runtime.HolderState{ID: "A", Kind: runtime.Fair, Fence: fa})
		if len(st.Waiters) != 2 || st.Waiters[0].ID != "B" || st.Waiters[1].ID != "C" {
			t.Fatalf("queue %+v, want B then C", st.Waiters)
		}
		for _, w := range st.Waiters {
			if w.Left <= 0 || w.Left > lease {
				t.Errorf("waiter %s: place lives %v, want in (0, %v]", w.ID, w.Left, lease)
			}
		}
		if n, err := la.ForceRelease(ctx, lk); err != nil || n != 1 {
			t.Fatalf("ForceRelease = %d, %v; want 1", n, err)
		}
		hb := gotLock(t, resB, fa)
		lostWithin(t, ha, lease)
		fb, _ := runtime.Fence(hb.Context())
		if err := hb.Release(); err != nil {
			t.Fatal(err)
		}
		gotLock(t, resC, fb)
	})
}

// A read/write lock: Inspect shows the readers and the waiting writer;
// ForceRelease removes every reader, and the writer gets in.
func TestInspectAndForceReleaseReadWrite(t *testing.T) {
	t.Parallel()
	forEachTarget(t, func(t *testing.T, tg target) {
		ctx := ctxTimeout(t, 30*time.Second)
		const lease = 3 * time.Second
		read := runtime.Lock{Kind: runtime.Read, Key: "ops:rw", Lease: lease}
		write := runtime.Lock{Kind: runtime.Write, Key: "ops:rw", Lease: lease, Wait: 20 * time.Second}
		opt, busy := busyOption()
		l1, l2, lw := tg.newLocker(t, holderNamed("R1")), tg.newLocker(t, holderNamed("R2")), tg.newLocker(t, holderNamed("W"), opt)

		h1, f1 := mustAcquire(t, ctx, l1, read)
		h2, f2 := mustAcquire(t, ctx, l2, read)
		res := waitFor(t, ctx, lw, busy, write)
		st := mustInspect(t, ctx, l1, write)
		checkHolders(t, st, lease,
			runtime.HolderState{ID: "R1", Kind: runtime.Read, Fence: f1},
			runtime.HolderState{ID: "R2", Kind: runtime.Read, Fence: f2})
		if st.WriterWaiting == nil || st.WriterWaiting.ID != "W" || st.WriterWaiting.Left <= 0 {
			t.Errorf("writer waiting %+v, want W", st.WriterWaiting)
		}
		if n, err := l1.ForceRelease(ctx, read); err != nil || n != 2 {
			t.Fatalf("ForceRelease = %d, %v; want 2 (every reader)", n, err)
		}
		hw := gotLock(t, res, f2)
		lostWithin(t, h1, lease)
		lostWithin(t, h2, lease)
		fw, _ := runtime.Fence(hw.Context())
		st = mustInspect(t, ctx, l1, read)
		checkHolders(t, st, lease, runtime.HolderState{ID: "W", Kind: runtime.Write, Fence: fw})
		if st.WriterWaiting != nil {
			t.Errorf("writer waiting %+v after the writer got in", st.WriterWaiting)
		}
	})
}

// A semaphore: Inspect counts the permits in use; ForceRelease takes them
// all back. A busy reply names no holder (there are several).
func TestInspectAndForceReleaseSemaphore(t *testing.T) {
	t.Parallel()
	forEachTarget(t, func(t *testing.T, tg target) {
		ctx := ctxTimeout(t, 30*time.Second)
		const lease = 3 * time.Second
		lk := runtime.Lock{Kind: runtime.Semaphore, Key: "ops:sem", Lease: lease, Permits: 2}
		la, lb := tg.newLocker(t, holderNamed("A")), tg.newLocker(t, holderNamed("B"))
		ha, fa := mustAcquire(t, ctx, la, lk)
		hb, fb := mustAcquire(t, ctx, lb, lk)
		st := mustInspect(t, ctx, la, lk)
		checkHolders(t, st, lease,
			runtime.HolderState{ID: "A", Kind: runtime.Semaphore, Fence: fa},
			runtime.HolderState{ID: "B", Kind: runtime.Semaphore, Fence: fb})
		if st.Permits != 2 {
			t.Errorf("permits %d, want 2 (as asked)", st.Permits)
		}
		once := lk
		once.Wait = runtime.NoWait
		_, err := tg.newLocker(t).Acquire(ctx, once)
		var be *runtime.BusyError
		if !errors.Is(err, runtime.ErrNotAcquired) || errors.As(err, &be) {
			t.Errorf("full semaphore: %v, want ErrNotAcquired naming nobody", err)
		}
		if n, err := la.ForceRelease(ctx, runtime.Lock{Kind: runtime.Semaphore, Key: "ops:sem"}); err != nil || n != 2 {
			t.Fatalf("ForceRelease = %d, %v; want 2", n, err)
		}
		lostWithin(t, ha, lease)
		lostWithin(t, hb, lease)
		h, _ := mustAcquire(t, ctx, la, once)
		if f, _ := runtime.Fence(h.Context()); f <= fb {
			t.Errorf("fence %d after the forced release, want above %d", f, fb)
		}
	})
}

// A busy error names the holder, and what is left of its lease where the
// script read it, with no extra call.
func TestBusyErrorNamesTheHolder(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		ctx := ctxTimeout(t, 30*time.Second)
		const lease = 5 * time.Second
		for _, c := range []struct {
			kind      runtime.Kind
			wait      time.Duration
			leaseLeft bool
		}{
			{runtime.Mutex, runtime.NoWait, true},
			{runtime.Mutex, 100 * time.Millisecond, false}, // a registration does not read the lease
			{runtime.Fair, runtime.NoWait, true},
			{runtime.Fair, 100 * time.Millisecond, true},
			{runtime.Write, runtime.NoWait, true},
			{runtime.Read, 100 * time.Millisecond, true},
		} {
			key := fmt.Sprintf("busy:%v:%v", c.kind, c.wait > 0)
			holdKind := c.kind
			if c.kind == runtime.Read {
				holdKind = runtime.Write
			}
			mustAcquire(t, ctx, tg.newLocker(t, holderNamed("owner")), runtime.Lock{Kind: holdKind, Key: key, Lease: lease})
			_, err := tg.newLocker(t).Acquire(ctx, runtime.Lock{Kind: c.kind, Key: key, Lease: lease, Wait: c.wait})
			var be *runtime.BusyError
			if !errors.Is(err, runtime.ErrNotAcquired) || !errors.As(err, &be) {
				t.Errorf("%v wait %v: %v, want a BusyError wrapping ErrNotAcquired", c.kind, c.wait, err)
				continue
			}
			if be.Holder != "owner" || !strings.Contains(err.Error(), "held by owner") {
				t.Errorf("%v wait %v: %q names %q, want owner", c.kind, c.wait, err, be.Holder)
			}
			if got := be.LeaseLeft > 0 && be.LeaseLeft <= lease; got != c.leaseLeft {
				t.Errorf("%v wait %v: lease left %v, want it said: %v", c.kind, c.wait, be.LeaseLeft, c.leaseLeft)
			}
		}
	})
}

// The default holder ids say which host and process hold a lock.
func TestDefaultHolderIDNamesHostAndProcess(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		ctx := ctxTimeout(t, 10*time.Second)
		l := tg.newLocker(t)
		lk := runtime.Lock{Kind: runtime.Mutex, Key: "whoami"}
		mustAcquire(t, ctx, l, lk)
		st := mustInspect(t, ctx, l, lk)
		if len(st.Holders) != 1 {
			t.Fatalf("holders %+v", st.Holders)
		}
		id := st.Holders[0].ID
		host, _ := os.Hostname()
		want := fmt.Sprintf("%s:%d:", hostInID(host), os.Getpid())
		if parts := strings.Split(id, ":"); len(parts) != 4 || !strings.HasPrefix(id, want) || len(id) > 64 {
			t.Errorf("holder id %q, want %s<random>:<n>", id, want)
		}
	})
}

// Ping answers while Redis does, and says so when it does not.
func TestPing(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		l := tg.newLocker(t)
		if err := l.Ping(ctxTimeout(t, 5*time.Second)); err != nil {
			t.Fatalf("Ping: %v", err)
		}
		l.Close()
		if err := l.Ping(ctxTimeout(t, 5*time.Second)); !errors.Is(err, runtime.ErrClosed) {
			t.Errorf("Ping after Close: %v, want ErrClosed", err)
		}
	})
}

// hostInID is the host part of a default holder id, as documented: bytes
// outside [A-Za-z0-9._-] become '_', at most 24 bytes.
func hostInID(host string) string {
	if host == "" {
		return "unknown"
	}
	b := []byte(host[:min(len(host), 24)])
	for i, c := range b {
		ok := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-'
		if !ok {
			b[i] = '_'
		}
	}
	return string(b)
}

// Ping fails, within its context, when the server is gone, and answers
// again once it is back; it also checks the Pub/Sub connection waiters
// use, which it opens if none has.
func TestPingServerDown(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	l := runtime.New(srv.Client(t))
	t.Cleanup(func() { l.Close() })
	if err := l.Ping(ctxTimeout(t, 5*time.Second)); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	srv.Kill()
	start := time.Now()
	err := l.Ping(ctxTimeout(t, 2*time.Second))
	if err == nil {
		t.Fatal("Ping with the server killed: nil error")
	}
	if took := time.Since(start); took > 4*time.Second {
		t.Errorf("Ping took %v with a 2s context", took)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	// go-redis redials on its own; the Pub/Sub connection too, on its
	// receive loop's next read.
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := l.Ping(ctxTimeout(t, 2*time.Second))
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Ping after the restart: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Ping checks the Pub/Sub connection on its own: with the command
// connection fine and the Pub/Sub one stalled, it fails and says which.
func TestPingChecksPubSub(t *testing.T) {
	srv := redisServer(t)
	proxy := redistest.StartProxy(t, srv.Addr)
	opts := srv.Options()
	opts.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
		// Pub/Sub connections go through the proxy, command connections
		// straight to the server. go-redis does not say which a dial is
		// for, and their order is not fixed (the backend may open its
		// Pub/Sub connection first): the dialling goroutine's stack does.
		buf := make([]byte, 16<<10)
		if strings.Contains(string(buf[:goruntime.Stack(buf, false)]), "(*PubSub)") {
			addr = proxy.Addr
		}
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { rdb.Close() })
	l := runtime.New(rdb)
	t.Cleanup(func() { l.Close() })
	if err := l.Ping(ctxTimeout(t, 5*time.Second)); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	proxy.SetMode(redistest.Blackhole())
	err := l.Ping(ctxTimeout(t, time.Second))
	if err == nil || !strings.Contains(err.Error(), "Pub/Sub") {
		t.Fatalf("Ping with the Pub/Sub connection stalled: %v, want a Pub/Sub error", err)
	}
	proxy.SetMode(redistest.Forward())
	if err := l.Ping(ctxTimeout(t, 5*time.Second)); err != nil {
		t.Errorf("Ping once the Pub/Sub connection flows again: %v", err)
	}
}

// On a Cluster, Ping asks every master, and Inspect and ForceRelease find
// each lock's node.
func TestOpsOnCluster(t *testing.T) {
	t.Parallel()
	cl := redistest.StartCluster(t, 3)
	l := runtime.New(cl.Client(t), holderNamed("C"))
	t.Cleanup(func() { l.Close() })
	ctx := ctxTimeout(t, 20*time.Second)
	if err := l.Ping(ctx); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	lk := runtime.Lock{Kind: runtime.Fair, Key: "cluster:ops", Lease: 3 * time.Second}
	h, fence := mustAcquire(t, ctx, l, lk)
	checkHolders(t, mustInspect(t, ctx, l, lk), lk.Lease, runtime.HolderState{ID: "C", Kind: runtime.Fair, Fence: fence})
	if n, err := l.ForceRelease(ctx, lk); err != nil || n != 1 {
		t.Fatalf("ForceRelease = %d, %v; want 1", n, err)
	}
	lostWithin(t, h, lk.Lease)
}
