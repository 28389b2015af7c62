package faults

import (
	"errors"
	"testing"
	"time"

	"github.com/lockgen/lockgen/redistest"
	"github.com/lockgen/lockgen/runtime"
	"github.com/redis/go-redis/v9"
)

// A lock whose loss the holder has been told of is released at once, with
// ErrLockLost, even with Redis down: the release does not wait for a
// server that is the reason the lock was lost (before: the release
// timeout, 5 s, after the loss was reported).
func TestReleaseAfterLossWithRedisDown(t *testing.T) {
	t.Parallel()
	const lease = time.Second
	e := newEnv(t)
	s := e.locker(e.client(e.srv.Addr, nil), "rl")
	h := acquire(ctxFor(t, 10*time.Second), s, runtime.Lock{Kind: runtime.Mutex, Key: "lost-down", Lease: lease})
	if h.err != nil {
		t.Fatal(h.err)
	}
	e.srv.Kill()
	select {
	case <-h.held.Context().Done():
	case <-time.After(3 * lease):
		t.Fatal("the holder was not told of the loss")
	}
	start := time.Now()
	err := h.held.Release()
	took := time.Since(start)
	t.Logf("release of a lock lost with Redis down: %v after the call: %v", took.Round(time.Microsecond), err)
	if !errors.Is(err, runtime.ErrLockLost) {
		t.Errorf("release after the loss: %v, want ErrLockLost", err)
	}
	if took > 100*time.Millisecond {
		t.Errorf("release after the loss took %v, want under 100 ms", took)
	}
}

// Close returns within a second whatever the server answered: after
// acquires refused with NOAUTH or WRONGPASS (nothing ran, so nothing needs
// giving back), or whose dial was refused (nothing was sent).
func TestCloseAfterRefusals(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	if err := srv.Client(t).ConfigSet(ctxFor(t, 5*time.Second), "requirepass", "right").Err(); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		opts *redis.Options
	}{
		{"NOAUTH", &redis.Options{Addr: srv.Addr}},
		{"WRONGPASS", &redis.Options{Addr: srv.Addr, Password: "wrong"}},
		{"refused dial", &redis.Options{Addr: redistest.ReserveAddr(t)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rdb := redis.NewClient(c.opts)
			t.Cleanup(func() { rdb.Close() })
			l := runtime.New(rdb, runtime.WithKeyPrefix("lockgen:"))
			for i := range 3 {
				_, err := l.Acquire(ctxFor(t, 10*time.Second), runtime.Lock{Kind: runtime.Mutex, Key: "refused", Lease: 10 * time.Second, Wait: 300 * time.Millisecond})
				if err == nil {
					t.Fatalf("acquire %d succeeded", i)
				}
				if i == 0 {
					t.Logf("%s: acquire: %v", c.name, err)
				}
			}
			start := time.Now()
			err := l.Close()
			took := time.Since(start)
			t.Logf("%s: Close took %v (%v)", c.name, took.Round(time.Millisecond), err)
			if took > time.Second {
				t.Errorf("%s: Close took %v, want within 1 s", c.name, took.Round(time.Millisecond))
			}
		})
	}
}
