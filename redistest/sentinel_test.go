package redistest_test

import (
	"context"
	"testing"
	"time"

	"github.com/lockgen/lockgen/redistest"
)

func TestSentinelFailsOverGracefullyAndOnKill(t *testing.T) {
	d := redistest.StartSentinel(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rdb := d.FailoverClient(t)
	if err := rdb.Set(ctx, "k", "before", 0).Err(); err != nil {
		t.Fatal(err)
	}
	old, err := d.FailoverGraceful(ctx)
	if err != nil {
		t.Fatal(err)
	}
	second, err := d.WaitNewMaster(ctx, old)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.WaitReplicaOf(ctx, old, second); err != nil {
		t.Fatal(err)
	}
	if v, err := second.Client(t).Get(ctx, "k").Result(); err != nil || v != "before" {
		t.Fatalf("new master after graceful failover: GET k = %q, %v; want the write made before", v, err)
	}
	killed, err := d.KillMaster(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if killed != second {
		t.Fatalf("killed %s, but the master was %s", killed.Addr, second.Addr)
	}
	third, err := d.WaitNewMaster(ctx, second)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := rdb.Get(ctx, "k").Result(); err != nil || v != "before" {
		t.Fatalf("failover client after the kill: GET k = %q, %v", v, err)
	}
	if third == old {
		t.Logf("the first master came back as master (it was a synced replica)")
	}
}

func TestSentinelCutReplicationLosesWritesOnKill(t *testing.T) {
	d := redistest.StartSentinel(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	master, err := d.Master(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m := master.Client(t)
	if err := m.Set(ctx, "kept", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := m.Wait(ctx, 2, 5*time.Second).Result(); err != nil || n != 2 {
		t.Fatalf("WAIT 2 before the cut: %d, %v", n, err)
	}
	restore, err := d.CutReplication(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Set(ctx, "lost", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := m.Wait(ctx, 1, 300*time.Millisecond).Result(); err != nil || n != 0 {
		t.Fatalf("WAIT 1 after the cut: %d replicas acknowledged (%v), want 0", n, err)
	}
	if _, err := d.KillMaster(ctx); err != nil {
		t.Fatal(err)
	}
	if err := restore(ctx); err != nil {
		t.Fatal(err)
	}
	next, err := d.WaitNewMaster(ctx, master)
	if err != nil {
		t.Fatal(err)
	}
	c := next.Client(t)
	if n, err := c.Exists(ctx, "kept").Result(); err != nil || n != 1 {
		t.Errorf("the write acknowledged before the cut is missing on the new master: %d, %v", n, err)
	}
	if n, err := c.Exists(ctx, "lost").Result(); err != nil || n != 0 {
		t.Errorf("the write made during the cut reached the new master: %d, %v", n, err)
	}
}
