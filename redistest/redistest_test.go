package redistest_test

import (
	"context"
	"testing"

	"github.com/lockgen/lockgen/redistest"
)

func TestStartServesCommands(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	if err := rdb.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if got, err := rdb.Get(ctx, "k").Result(); err != nil || got != "v" {
		t.Fatalf("GET k = %q, %v; want \"v\"", got, err)
	}
	srv.Close()
	if err := rdb.Ping(ctx).Err(); err == nil {
		t.Fatal("PING succeeded after Close")
	}
}

func TestStartClusterAssignsAllSlotsAcrossMasters(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	rdb := cl.Client(t)
	ctx := context.Background()
	slots, err := rdb.ClusterSlots(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	covered := 0
	masters := map[string]bool{}
	for _, s := range slots {
		covered += s.End - s.Start + 1
		masters[s.Nodes[0].Addr] = true
	}
	if covered != 16384 || len(masters) != 3 {
		t.Fatalf("slots covered = %d over %d masters; want 16384 over 3", covered, len(masters))
	}
	// Keys in different slots land on different nodes and still work.
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		if err := rdb.Set(ctx, k, k, 0).Err(); err != nil {
			t.Fatalf("SET %s: %v", k, err)
		}
	}
}
