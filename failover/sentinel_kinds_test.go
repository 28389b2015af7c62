package failover

import (
	"context"
	"testing"
	"time"

	"github.com/lockgen/lockgen/redistest"
	"github.com/lockgen/lockgen/runtime"
)

// Through redis.NewFailoverClient, every kind held and waited on across a
// graceful failover (SENTINEL FAILOVER): no waiter fails, each is woken
// within a second (with slack) of the release made after the failover, and
// every holder keeps its lock (its context is not cancelled).
//
// The failover is over when the old master has been demoted and synced:
// until then (up to the sentinels' 10 s INFO period after the switch), the
// waiters' Pub/Sub connection may still be on the old master and hear no
// wake message. go-redis's failover client closes only its command
// connections at the switch; the process moves its Pub/Sub connection
// when it next dials the new master (internal/goredis/serverwatch.go), that is at
// its next call. A process that waits only on read, write or semaphore
// locks makes none: measured, such a waiter released at the switch got
// its lock 5.7 and 6.9 s later, by its timer (a mutex waiter's heartbeat,
// every 167 ms, moves it in time; docs/failover.md).
func TestSentinelGracefulFailoverKeepsHoldersAndWakesWaiters(t *testing.T) {
	t.Parallel()
	sentinelFailoverKinds(t, true, func(ctx context.Context, d *redistest.Sentinel) (*redistest.Server, error) {
		return d.FailoverGraceful(ctx)
	})
}

// The same across a SIGKILL of the master: its waiters meet refused
// connections for the seconds the sentinels take to promote a replica,
// and retry rather than fail.
func TestSentinelKillFailoverKeepsHoldersAndWakesWaiters(t *testing.T) {
	t.Parallel()
	sentinelFailoverKinds(t, false, func(ctx context.Context, d *redistest.Sentinel) (*redistest.Server, error) {
		return d.KillMaster(ctx)
	})
}

func sentinelFailoverKinds(t *testing.T, graceful bool, failover func(context.Context, *redistest.Sentinel) (*redistest.Server, error)) {
	d := redistest.StartSentinel(t)
	ctx := sentinelCtx(t, 2*time.Minute)
	prefix := sentinelPrefix(t)
	holders := sentinelLocker(t, d, prefix)
	waiters := sentinelLocker(t, d, prefix)
	cases := sentinelCases()
	held := make([]*runtime.Held, len(cases))
	outs := make([]<-chan sentinelOutcome, len(cases))
	for i, c := range cases {
		h, err := holders.Acquire(ctx, c.held)
		if err != nil {
			t.Fatalf("%s: acquire before the failover: %v", c.name, err)
		}
		held[i] = h
		w := c.waited
		w.Wait = time.Minute
		outs[i] = sentinelAcquireAsync(ctx, waiters.Locker, w)
		waiters.ev.waitFor(t, runtime.EventBusy, c.waited.Key, 10*time.Second)
	}
	sentinelReplicated(t, ctx, d)

	old, err := failover(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	master, err := d.WaitNewMaster(ctx, old)
	if err != nil {
		t.Fatal(err)
	}
	holders.waitFollows(t, ctx, master)
	t.Logf("new master %s named by every sentinel and followed by the holders' client %v after the failover started", master.Addr, time.Since(start).Round(time.Millisecond))
	if graceful {
		if err := d.WaitReplicaOf(ctx, old, master); err != nil {
			t.Fatal(err)
		}
		t.Logf("old master demoted and synced %v after the failover started", time.Since(start).Round(time.Millisecond))
	}

	for i, c := range cases {
		if err := sentinelStillHeld(held[i]); err != nil {
			t.Errorf("%s: the lock survived on the new master, but: %v", c.name, err)
		}
		select {
		case o := <-outs[i]:
			t.Fatalf("%s: the waiter returned while the lock was still held: %v", c.name, o.err)
		default:
		}
	}
	for i, c := range cases {
		if err := held[i].Release(); err != nil {
			t.Errorf("%s: release after the failover: %v", c.name, err)
		}
		released := time.Now()
		select {
		case o := <-outs[i]:
			if o.err != nil {
				t.Errorf("%s: the waiter failed: %v", c.name, o.err)
				continue
			}
			delay := o.at.Sub(released)
			t.Logf("%s: waiter got the lock %v after the release", c.name, delay.Round(time.Millisecond))
			if delay > sentinelWakeBound {
				t.Errorf("%s: waiter got the lock %v after the release; want within %v", c.name, delay.Round(time.Millisecond), sentinelWakeBound)
			}
			if err := o.held.Release(); err != nil {
				t.Errorf("%s: waiter's release: %v", c.name, err)
			}
		case <-time.After(sentinelLease + 5*time.Second):
			t.Errorf("%s: the waiter did not get the lock within %v of the release", c.name, sentinelLease+5*time.Second)
		}
	}
	t.Logf("transient errors retried by the waiters: %d; by the holders' acquires: %d", waiters.ev.count(runtime.EventRetried), holders.ev.count(runtime.EventRetried))
	if n := holders.ev.count(runtime.EventLost); n > 0 {
		t.Errorf("%d holders lost their locks", n)
	}
}
