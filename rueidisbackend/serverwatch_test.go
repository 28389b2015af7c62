package rueidisbackend_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockgen/lockgen/redistest"
	"github.com/lockgen/lockgen/rueidisbackend"
	"github.com/lockgen/lockgen/runtime"
)

// A server that restarts empty has lost every lock. A holder on the rueidis
// backend hears of it once rueidis has reconnected, not at its next
// renewal (lease/3 = 10 s after its acquire).
func TestRestartedServerCancelsHolders(t *testing.T) {
	s := redistest.Start(t)
	l := rueidisbackend.NewLocker(newClient(t, s.Addr), runtime.WithDefaultLease(30*time.Second))
	t.Cleanup(func() { l.Close() })
	ctx := ctxTimeout(t, 30*time.Second)
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
	select {
	case <-h.Context().Done():
		if cause := context.Cause(h.Context()); !errors.Is(cause, runtime.ErrLockLost) {
			t.Errorf("cancelled with %v, want ErrLockLost", cause)
		}
		t.Logf("holder cancelled %v after the restart", time.Since(restarted).Round(time.Millisecond))
	case <-time.After(5 * time.Second):
		t.Fatal("the holder was not told within 5s of the restart that its lock is gone")
	}
}

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
