package embedded_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/embedded"
	"github.com/lockgen/lockgen/goredisbackend"
	"github.com/lockgen/lockgen/lua"
	"github.com/lockgen/lockgen/luashim"
	"github.com/lockgen/lockgen/quorum"
	"github.com/lockgen/lockgen/redistest"
	"github.com/lockgen/lockgen/runtime"
	"github.com/redis/go-redis/v9"
)

// skewedClock is the machine's clock moved by a fixed offset: a server
// whose clock is wrong by that much.
type skewedClock time.Duration

func (s skewedClock) Now() time.Time { return time.Now().Add(time.Duration(s)) }

// switchable is a server the test can take down: every call fails while
// it is.
type switchable struct {
	backend.Backend
	down atomic.Bool
}

var errDown = errors.New("server down (test)")

func (s *switchable) Eval(ctx context.Context, c backend.Call) (any, error) {
	if s.down.Load() {
		return nil, errDown
	}
	return s.Backend.Eval(ctx, c)
}

func (s *switchable) EvalBatch(ctx context.Context, calls []backend.Call) []backend.Reply {
	if s.down.Load() {
		out := make([]backend.Reply, len(calls))
		for i := range out {
			out[i].Err = errDown
		}
		return out
	}
	return s.Backend.EvalBatch(ctx, calls)
}

func (s *switchable) Subscribe(ctx context.Context, channel string, deliver func(string)) (func(), error) {
	if s.down.Load() {
		return nil, errDown
	}
	return s.Backend.Subscribe(ctx, channel, deliver)
}

// fenceRounds takes and releases one quorum lock round after round, with a
// different server down each time, so that each majority differs from the
// one before, and checks that every fence is above the previous one.
func fenceRounds(t *testing.T, servers []*switchable, prefix string) {
	backends := make([]backend.Backend, len(servers))
	for i, s := range servers {
		backends[i] = s
	}
	l, err := quorum.NewWithBackends(backends, runtime.WithKeyPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx := ctxTimeout(t, time.Minute)
	var last int64
	// down: -1 none, else that server. All up first, so that the fastest
	// clock's fence is the lock's; then majorities without it.
	for r, down := range []int{-1, 0, 1, 2, 0, -1, 2, 1, 0} {
		for i, s := range servers {
			s.down.Store(i == down)
		}
		// It may wait for a lease: a release goes on in the background on
		// the servers past its majority, and one that a round's switch
		// cut off (under load it came late) leaves the previous holder's
		// lock on that server until its lease ends.
		h, err := l.Acquire(ctx, runtime.Lock{Kind: runtime.Mutex, Key: "k", Lease: 2 * time.Second, Wait: 10 * time.Second})
		if err != nil {
			t.Fatalf("round %d (server %d down): %v", r, down+1, err)
		}
		fence, _ := runtime.Fence(h.Context())
		if fence <= last {
			t.Errorf("round %d (server %d down): fence %d not above the previous holder's %d (by %v)", r, down+1, fence, last, time.Duration(last-fence)*time.Microsecond)
		}
		last = fence
		if err := h.Release(); err != nil {
			t.Fatalf("round %d: release: %v", r, err)
		}
	}
	for _, s := range servers {
		s.down.Store(false)
	}
}

// Fences rise across holders on a quorum whose servers' clocks disagree by
// 5 s each way, though the majorities change from holder to holder: the
// fence written back to each majority as its floor outlives the holder.
// The premise is checked too: the slowest server alone hands out fences
// 10 s below the fastest's.
func TestQuorumFencesRiseWithSkewedClocks(t *testing.T) {
	skews := []time.Duration{5 * time.Second, 0, -5 * time.Second}
	servers := make([]*switchable, len(skews))
	shims := make([]*luashim.Server, len(skews))
	for i, d := range skews {
		shims[i] = luashim.New(skewedClock(d))
		servers[i] = &switchable{Backend: embedded.NewBackend(shims[i])}
	}
	fenceRounds(t, servers, "skewed:")

	fast, slow := soloFence(t, shims[0]), soloFence(t, shims[2])
	if gap := time.Duration(fast-slow) * time.Microsecond; gap < 9*time.Second {
		t.Fatalf("the fastest and slowest servers' own fences lie %v apart, want about 10s: the skew is not what the test needs", gap)
	}
}

// soloFence is the fence one server grants on its own for a fresh lock.
func soloFence(t *testing.T, srv *luashim.Server) int64 {
	t.Helper()
	b := embedded.NewBackend(srv)
	base := "solo:mutex:{k}"
	v, err := b.Eval(context.Background(), backend.Call{Script: lua.MutexAcquire, Keys: []string{base, base + ":waiters", base + ":wake"}, Args: []string{"solo", "1000", "PUBLISH", "0"}})
	fence, ok := v.(int64) // a mutex grant replies its fence
	if err != nil || !ok || fence <= 0 {
		t.Fatalf("solo acquire: %#v, %v", v, err)
	}
	return fence
}

// The same rounds on three real redis-servers (clocks in agreement).
func TestQuorumFencesRiseOnRedisServers(t *testing.T) {
	servers := make([]*switchable, 3)
	for i := range servers {
		srv := redistest.Start(t)
		c := redis.NewClient(srv.Options())
		t.Cleanup(func() { c.Close() })
		servers[i] = &switchable{Backend: goredisbackend.New(c)}
	}
	fenceRounds(t, servers, fmt.Sprintf("real%d:", time.Now().UnixNano()))
}
