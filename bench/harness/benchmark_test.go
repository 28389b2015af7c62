package harness

import (
	"context"
	"testing"

	"github.com/lockgen/lockgen/bench/peers"
	"github.com/lockgen/lockgen/redistest"
)

// BenchmarkUncontended is workload 1 for `go test -bench`: one Lock + Unlock
// of a free key per op, next to the PING that bounds it from below.
//
//	cd bench && go test -run '^$' -bench Uncontended ./harness
func BenchmarkUncontended(b *testing.B) {
	srv := redistest.Start(b)
	ctx := context.Background()
	b.Run("ping", func(b *testing.B) {
		rdb := srv.Client(b)
		b.ReportAllocs()
		for b.Loop() {
			if err := rdb.Ping(ctx).Err(); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, p := range peers.All() {
		b.Run(p.Name(), func(b *testing.B) {
			c, err := p.Open(peers.Config{Addr: srv.Addr})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			b.ReportAllocs()
			for b.Loop() {
				h, err := c.Lock(ctx, "bench")
				if err != nil {
					b.Fatal(err)
				}
				if err := h.Unlock(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
