package rueidisbackend_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/lockgen/lockgen/redistest"
	"github.com/lockgen/lockgen/rueidisbackend"
	"github.com/lockgen/lockgen/runtime"
)

// A server that restarts empty has lost every lock. A holder on the rueidis
// backend hears of it once rueidis has reconnected, not at its next
// renewal (lease/3 = 30 s after its acquire).
//
// How soon depends on the machine: the watch's subscription comes back
// when rueidis has dialled again, and while that fails the watch tries
// again 100 ms to 2 s apart (watchPauseMin, watchPauseMax); the verification
// of the held lock is one more round trip. Alone it takes a few ms; under
// load a 5 s bound failed once. restartNoticedWithin leaves the scheduler
// room and stays half of the renewal's 30 s, so a restart noticed only at
// the renewal still fails the test.
func TestRestartedServerCancelsHolders(t *testing.T) {
	s := redistest.Start(t)
	l := rueidisbackend.NewLocker(newClient(t, s.Addr), runtime.WithDefaultLease(90*time.Second))
	t.Cleanup(func() { l.Close() })
	ctx := ctxTimeout(t, 60*time.Second)
	h, err := l.Acquire(ctx, runtime.Lock{Kind: runtime.Mutex, Key: "k", Wait: runtime.NoWait})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	waitForSubscriber(t, s, "lockgen:watch")

	s.Kill()
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	awaitLost(t, h, restartNoticedWithin)
	t.Logf("holder cancelled %v after the restart", time.Since(restarted).Round(time.Millisecond))
}

// restartNoticedWithin bounds how long after a restart a holder may learn
// that its lock is gone: a redial and a few of the watch's pauses, several
// times over for a busy machine.
const restartNoticedWithin = 15 * time.Second

// waitForSubscriber waits until s has a subscriber of channel.
func waitForSubscriber(t *testing.T, s *redistest.Server, channel string) {
	t.Helper()
	admin := s.Client(t)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		n, err := admin.PubSubNumSub(context.Background(), channel).Result()
		if err == nil && n[channel] > 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("nobody subscribed to %s within 10s", channel)
}

// Behind Sentinel, a lock the old master granted but never replicated is
// gone from the replica promoted when that master dies. The holder hears
// of it once rueidis has moved to the new master, not at its next renewal
// (lease/3 = 20 s after its acquire).
func TestSentinelFailoverCancelsLostHolders(t *testing.T) {
	d := redistest.StartSentinel(t)
	ctx := ctxTimeout(t, 60*time.Second)
	c, err := rueidis.NewClient(rueidis.ClientOption{
		InitAddress: d.Addrs,
		Sentinel:    rueidis.SentinelOption{MasterSet: redistest.SentinelMasterName},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	l := rueidisbackend.NewLocker(c, runtime.WithDefaultLease(60*time.Second))
	t.Cleanup(func() { l.Close() })
	master, err := d.Master(ctx)
	if err != nil {
		t.Fatal(err)
	}
	waitForSubscriber(t, master, "lockgen:watch")
	if _, err := d.CutReplication(ctx); err != nil {
		t.Fatal(err)
	}
	h, err := l.Acquire(ctx, runtime.Lock{Kind: runtime.Mutex, Key: "k", Wait: runtime.NoWait})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	acquired := time.Now()

	old, err := d.KillMaster(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.WaitNewMaster(ctx, old); err != nil {
		t.Fatal(err)
	}
	promoted := time.Now()
	awaitLost(t, h, 10*time.Second)
	t.Logf("holder cancelled %v after the acquire, %v after the sentinels named the new master",
		time.Since(acquired).Round(time.Millisecond), time.Since(promoted).Round(time.Millisecond))
}

// awaitLost waits, at most within, until h's context ends for the loss of
// its lock.
func awaitLost(t *testing.T, h *runtime.Held, within time.Duration) {
	t.Helper()
	select {
	case <-h.Context().Done():
		if cause := context.Cause(h.Context()); !errors.Is(cause, runtime.ErrLockLost) {
			t.Errorf("cancelled with %v, want ErrLockLost", cause)
		}
	case <-time.After(within):
		t.Fatalf("the holder was not told within %v that its lock is gone", within)
	}
}
