package redistest

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
)

// Shared is one redis-server for the tests of a package, started on first
// use: most tests need a server but not one of their own, and a server per
// test would cost a second of start-up each. The tests keep apart by key
// prefix (UniquePrefix). The package's TestMain calls Close after m.Run.
type Shared struct {
	once sync.Once
	srv  *Server
	err  error
}

// Server returns the shared server, starting it if no test has yet.
func (s *Shared) Server(tb testing.TB) *Server {
	tb.Helper()
	s.once.Do(func() { s.srv, s.err = Launch() })
	if s.err != nil {
		tb.Fatalf("redistest: %v", s.err)
	}
	return s.srv
}

// Client returns a go-redis client of the shared server, closed when the
// test ends.
func (s *Shared) Client(tb testing.TB) *redis.Client {
	tb.Helper()
	return s.Server(tb).Client(tb)
}

// Close stops the server if it was started.
func (s *Shared) Close() {
	if s.srv != nil {
		s.srv.Close()
	}
}

var prefixSeq struct {
	sync.Mutex
	n int
}

// UniquePrefix returns a key prefix no other call in any process of this
// machine returns at the same time (it carries the pid), so that tests on a
// shared server do not see each other's keys.
func UniquePrefix() string {
	prefixSeq.Lock()
	defer prefixSeq.Unlock()
	prefixSeq.n++
	return fmt.Sprintf("t%d-%d:", os.Getpid(), prefixSeq.n)
}

// MasterOf returns the address of the Cluster master serving key, as
// CLUSTER KEYSLOT and CLUSTER SLOTS tell rdb.
func MasterOf(tb testing.TB, rdb *redis.ClusterClient, key string) string {
	tb.Helper()
	ctx := context.Background()
	slot, err := rdb.ClusterKeySlot(ctx, key).Result()
	if err != nil {
		tb.Fatal(err)
	}
	ranges, err := rdb.ClusterSlots(ctx).Result()
	if err != nil {
		tb.Fatal(err)
	}
	for _, r := range ranges {
		if int64(r.Start) <= slot && slot <= int64(r.End) && len(r.Nodes) > 0 {
			return r.Nodes[0].Addr
		}
	}
	tb.Fatalf("redistest: no master for slot %d", slot)
	return ""
}

// RunChild plays one role of a test binary that a test ran again as a
// child process (to kill or stop it, or to have several processes): the
// role named mode, out of roles. It returns the process's exit status,
// reporting an error or an unknown role on stderr, so that TestMain can
// end with os.Exit(RunChild(...)).
func RunChild(mode string, roles map[string]func() error) int {
	err := fmt.Errorf("unknown child mode %q", mode)
	if run, ok := roles[mode]; ok {
		err = run()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	return 0
}
