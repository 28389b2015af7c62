package runtime_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/lua"
	"github.com/lockgen/lockgen/runtime"
)

// beatLog records the fair heartbeats a Locker sends: when, the deadline
// and refresh flag they carry, and what Redis replied. dead makes every
// call fail without reaching Redis, as if the process had been killed.
type beatLog struct {
	backend.Backend
	dead atomic.Bool

	mu    sync.Mutex
	beats []sentBeat
}

type sentBeat struct {
	at       time.Time
	deadline int64
	refresh  string
	reply    any
	err      error
}

var errKilled = errors.New("test: process killed")

func (b *beatLog) Eval(ctx context.Context, c backend.Call) (any, error) {
	if b.dead.Load() {
		return nil, errKilled
	}
	return b.Backend.Eval(ctx, c)
}

func (b *beatLog) EvalWait(ctx context.Context, c backend.Call, replicas int, timeout time.Duration) (any, int, error) {
	if b.dead.Load() {
		return nil, 0, errKilled
	}
	return b.Backend.EvalWait(ctx, c, replicas, timeout)
}

func (b *beatLog) EvalBatch(ctx context.Context, calls []backend.Call) []backend.Reply {
	at := time.Now()
	if b.dead.Load() {
		out := make([]backend.Reply, len(calls))
		for i := range out {
			out[i].Err = errKilled
		}
		return out
	}
	replies := b.Backend.EvalBatch(ctx, calls)
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, c := range calls {
		if c.Script != lua.FairHeartbeat || len(c.Args) != 5 || i >= len(replies) {
			continue
		}
		d, _ := strconv.ParseInt(c.Args[3], 10, 64)
		b.beats = append(b.beats, sentBeat{at: at, deadline: d, refresh: c.Args[4], reply: replies[i].Value, err: replies[i].Err})
	}
	return replies
}

func (b *beatLog) answered() []sentBeat {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []sentBeat
	for _, s := range b.beats {
		if s.err == nil {
			out = append(out, s)
		}
	}
	return out
}

// waitBeats waits until log has n answered heartbeats.
func waitBeats(t *testing.T, log *beatLog, n int, within time.Duration) []sentBeat {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		if got := log.answered(); len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d answered heartbeats in %v, want %d", len(log.answered()), within, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A fair waiter behind a live holder keeps its place across many
// heartbeats with a short lease, each carrying a deadline on the server's
// clock (learnt from its busy reply) and a TTL refresh at least every 1.5
// leases; the waiter that came later stays behind it.
func TestFairWaiterKeepsItsPlaceAcrossHeartbeats(t *testing.T) {
	t.Parallel()
	forEachTarget(t, func(t *testing.T, tg target) {
		ctx := ctxTimeout(t, 30*time.Second)
		lock := runtime.Lock{Kind: runtime.Fair, Key: "beats", Lease: 300 * time.Millisecond}
		h, err := tg.newLocker(t).Acquire(ctx, lock)
		if err != nil {
			t.Fatal(err)
		}
		log := &beatLog{}
		observe, busy := busySignal()
		first := tg.newLockerVia(t, func(b backend.Backend) backend.Backend { log.Backend = b; return log }, runtime.WithObserver(observe))
		gotFirst := acquireAsync(ctx, first, lock)
		waitBusy(t, busy, 1)
		observe2, busy2 := busySignal()
		second := tg.newLockerVia(t, func(b backend.Backend) backend.Backend { return b }, runtime.WithObserver(observe2))
		gotSecond := acquireAsync(ctx, second, lock)
		waitBusy(t, busy2, 1)

		beats := waitBeats(t, log, 8, 20*time.Second) // at least 5 leases
		var lastRefresh time.Time
		for i, b := range beats {
			if v, ok := b.reply.(int64); !ok || v < 1 {
				t.Errorf("heartbeat %d replied %#v, want the place kept", i, b.reply)
			}
			// The server runs on this machine: its clock is ours. The
			// deadline is a lease from the send, late by at most the delay
			// of the busy reply it was learnt from.
			if late := time.Duration(b.deadline-b.at.UnixMilli())*time.Millisecond - lock.Lease; late < -100*time.Millisecond || late > time.Second {
				t.Errorf("heartbeat %d sent deadline %d, %v off a lease from its send", i, b.deadline, late)
			}
			if b.refresh == "1" {
				lastRefresh = b.at
			} else if lastRefresh.IsZero() || b.at.Sub(lastRefresh) >= 3*lock.Lease/2 {
				t.Errorf("heartbeat %d asked no refresh %v after the last one", i, b.at.Sub(lastRefresh))
			}
		}
		if err := h.Release(); err != nil {
			t.Fatal(err)
		}
		a := <-gotFirst
		if a.err != nil {
			t.Fatalf("first waiter: %v", a.err)
		}
		select {
		case b := <-gotSecond:
			t.Fatalf("second waiter got the lock (%v) while the first holds it", b.err)
		default:
		}
		if err := a.h.Release(); err != nil {
			t.Fatal(err)
		}
		if b := <-gotSecond; b.err != nil {
			t.Fatalf("second waiter: %v", b.err)
		} else {
			b.h.Release()
		}
	})
}

// A waiter that dies (its process killed: no heartbeat, no call reaches
// Redis) leaves the queue within about a lease: the waiter behind it gets
// the lock once the holder releases and the dead one's place has run out.
func TestFairDeadWaiterLeavesWithinALease(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		ctx := ctxTimeout(t, 30*time.Second)
		lock := runtime.Lock{Kind: runtime.Fair, Key: "deadbeat", Lease: 300 * time.Millisecond}
		h, err := tg.newLocker(t).Acquire(ctx, lock)
		if err != nil {
			t.Fatal(err)
		}
		dying := &beatLog{}
		observe, busy := busySignal()
		doomed := tg.newLockerVia(t, func(b backend.Backend) backend.Backend { dying.Backend = b; return dying }, runtime.WithObserver(observe))
		doomedCtx, cancelDoomed := context.WithCancel(ctx)
		defer cancelDoomed()
		acquireAsync(doomedCtx, doomed, lock)
		waitBusy(t, busy, 1)
		observe2, busy2 := busySignal()
		live := tg.newLockerVia(t, func(b backend.Backend) backend.Backend { return b }, runtime.WithObserver(observe2))
		gotLive := acquireAsync(ctx, live, lock)
		waitBusy(t, busy2, 1)
		waitBeats(t, dying, 2, 10*time.Second) // its place was kept by heartbeats
		dying.dead.Store(true)
		died := time.Now()
		if err := h.Release(); err != nil {
			t.Fatal(err)
		}
		a := <-gotLive
		if a.err != nil {
			t.Fatalf("live waiter: %v", a.err)
		}
		defer a.h.Release()
		// The dead place lives at most a lease from its last heartbeat
		// (plus that call's delay); the live waiter's heartbeat, due
		// within 2/3 lease, hands the lock on then. Slack for a busy
		// machine.
		if waited := a.at.Sub(died); waited > 2*time.Second {
			t.Errorf("live waiter got the lock %v after the one ahead died, want about a lease (%v)", waited, lock.Lease)
		} else {
			t.Logf("live waiter got the lock %v after the one ahead died (lease %v)", waited, lock.Lease)
		}
	})
}
