package runtime

import (
	"context"
	"testing"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/goredisbackend"
	"github.com/redis/go-redis/v9"
)

// NewWithBackend puts a coalescer in front of a backend that states
// Caps.HonorsDeadline (callqueue.InFront), and keeps its queue, so that
// concurrent calls share round trips over it as over go-redis; it puts
// none in front of a quorum (whose EvalBatch takes renewals only), of a
// backend that states nothing, or of the go-redis backend, which has a
// queue of its own off Cluster and none on it.
func TestNewWithBackendCoalescesWhatHonorsDeadlines(t *testing.T) {
	for _, tc := range []struct {
		name    string
		caps    backend.Caps
		fronted bool
	}{
		{"honors deadlines", backend.Caps{HonorsDeadline: true}, true},
		{"quorum", backend.Caps{HonorsDeadline: true, Quorum: true}, false},
		{"states nothing", backend.Caps{}, false},
	} {
		b := &capsBackend{caps: tc.caps}
		l := NewWithBackend(b)
		fronted := l.queue != nil
		if fronted != tc.fronted {
			t.Errorf("%s: queue %v, want a coalescer in front: %v", tc.name, l.queue, tc.fronted)
		}
		if fronted && l.queue.MaxFlights <= 4 {
			t.Errorf("%s: MaxFlights %d, want more than go-redis's for a client that pipelines by itself", tc.name, l.queue.MaxFlights)
		}
		if l.caps.HonorsDeadline != tc.caps.HonorsDeadline || l.Backend() != backend.Backend(b) {
			t.Errorf("%s: caps %+v, Backend() %T; want the backend's own", tc.name, l.caps, l.Backend())
		}
		l.Close()
	}
	// Neither dials: a client is not connected until its first command.
	single := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true})
	cluster := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}, ContextTimeoutEnabled: true})
	defer single.Close()
	defer cluster.Close()
	for _, rdb := range []redis.UniversalClient{single, cluster} {
		b := goredisbackend.New(rdb)
		got, co := coalesced(b)
		if got != b || (co != nil) != (rdb == single) {
			t.Errorf("go-redis backend over %T: %T and queue %v, want itself and its own queue (none on a Cluster)", rdb, got, co)
		}
		b.Close()
	}
}

// capsBackend states caps and answers every call with 1.
type capsBackend struct{ caps backend.Caps }

func (b *capsBackend) Caps() backend.Caps                           { return b.caps }
func (capsBackend) Eval(context.Context, backend.Call) (any, error) { return int64(1), nil }
func (capsBackend) PublishCommand() string                          { return "PUBLISH" }
func (capsBackend) Close() error                                    { return nil }
func (capsBackend) Subscribe(context.Context, string, func(string)) (func(), error) {
	return func() {}, nil
}
func (capsBackend) EvalBatch(_ context.Context, calls []backend.Call) []backend.Reply {
	out := make([]backend.Reply, len(calls))
	for i := range out {
		out[i].Value = int64(1)
	}
	return out
}
func (capsBackend) EvalWait(context.Context, backend.Call, int, time.Duration) (any, int, error) {
	return int64(1), 0, nil
}
