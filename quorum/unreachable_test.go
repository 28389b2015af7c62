package quorum_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockgen/lockgen/backendtest"
	"github.com/lockgen/lockgen/quorum"
	"github.com/lockgen/lockgen/runtime"
	"github.com/redis/go-redis/v9"
)

// defaultUnreachableTimeout is the documented default of
// runtime.WithUnreachableTimeout.
const defaultUnreachableTimeout = 15 * time.Second

// A quorum Locker with 2 of its 3 servers down, waiting until a context
// that never ends, fails with ErrNoQuorum within the unreachable timeout
// (it used to retry for ever). Its clients have go-redis's defaults, as
// an application's would.
func TestQuorumTwoDownNoDeadline(t *testing.T) {
	q := startQuorum(t, 3)
	for i, s := range q.servers {
		c := redis.NewClient(&redis.Options{Addr: s.Addr})
		t.Cleanup(func() { c.Close() })
		q.clients[i] = c
	}
	q.servers[1].Kill()
	q.servers[2].Kill()
	l := q.locker(t)
	lock := runtime.Lock{Kind: runtime.Mutex, Key: "a"}
	err, took := backendtest.AcquireWithin(t, l, context.Background(), lock, defaultUnreachableTimeout+10*time.Second)
	if !errors.Is(err, quorum.ErrNoQuorum) {
		t.Fatalf("2 of 3 down: %v, want ErrNoQuorum", err)
	}
	t.Logf("quorum, 2 of 3 down, no deadline: failed after %v", took.Round(time.Millisecond))
}
