package goredisbackend_test

import (
	"testing"

	"github.com/lockgen/lockgen/goredisbackend"
	"github.com/lockgen/lockgen/runtime"
	"github.com/redis/go-redis/v9"
)

// New states, without a round trip, what the Locker relies on: the
// publish command of the client's kind, boxed arguments, a master watch
// and a ping; and runtime.New is a Locker over the same backend.
func TestNewOverEachClientKind(t *testing.T) {
	// Nothing dials: no call is made on these clients.
	single := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	cluster := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}})
	t.Cleanup(func() { single.Close(); cluster.Close() })
	for _, tc := range []struct {
		name    string
		rdb     redis.UniversalClient
		publish string
	}{{"client", single, "PUBLISH"}, {"cluster", cluster, "SPUBLISH"}} {
		b := goredisbackend.New(tc.rdb)
		if got := b.PublishCommand(); got != tc.publish {
			t.Errorf("%s: PublishCommand %q, want %q", tc.name, got, tc.publish)
		}
		caps := b.Caps()
		if !caps.BoxedArgs || caps.WatchMasters == nil || caps.Ping == nil {
			t.Errorf("%s: Caps %+v: want boxed arguments, a master watch and a ping", tc.name, caps)
		}
		if err := b.Close(); err != nil {
			t.Errorf("%s: Close: %v", tc.name, err)
		}
		l := runtime.New(tc.rdb)
		if got := l.Backend().PublishCommand(); got != tc.publish {
			t.Errorf("%s: runtime.New's backend publishes with %q, want %q", tc.name, got, tc.publish)
		}
		l.Close()
	}
}
