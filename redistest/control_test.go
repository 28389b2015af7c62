package redistest_test

import (
	"context"
	"testing"
	"time"

	"github.com/lockgen/lockgen/redistest"
	"github.com/redis/go-redis/v9"
)

// A killed server comes back on the same port, empty, and a client made
// before the crash reconnects to it by itself.
func TestKillAndRestartOnTheSamePort(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	if err := rdb.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	pid, addr := srv.Pid(), srv.Addr
	if err := srv.Restart(); err == nil {
		t.Fatal("Restart of a running server succeeded; want an error")
	}
	srv.Kill()
	if err := rdb.Ping(ctx).Err(); err == nil {
		t.Fatal("PING succeeded after Kill")
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if srv.Pid() == pid || srv.Addr != addr {
		t.Fatalf("after Restart: pid %d (was %d), addr %s (was %s); want a new process on the same address", srv.Pid(), pid, srv.Addr, addr)
	}
	if n, err := rdb.Exists(ctx, "k").Result(); err != nil || n != 0 {
		t.Fatalf("EXISTS k after Restart = %d, %v; want 0 from the same client (reconnected, data gone)", n, err)
	}
	srv.Close()
	if err := srv.Restart(); err == nil {
		t.Fatal("Restart after Close succeeded; want an error")
	}
}

// DebugSleep returns while the server sleeps; every client waits for it.
func TestDebugSleepFreezesTheServer(t *testing.T) {
	const d = 800 * time.Millisecond
	srv := redistest.Start(t, redistest.EnableDebugCommand...)
	rdb := srv.Client(t)
	ctx := context.Background()
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	done, err := srv.DebugSleep(d)
	if err != nil {
		t.Fatal(err)
	}
	seen := time.Since(start)
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	answered := time.Since(start)
	if err := <-done; err != nil {
		t.Fatalf("DEBUG SLEEP: %v", err)
	}
	t.Logf("seen asleep after %v, PING answered after %v of a %v sleep", seen, answered, d)
	// The PING was sent once the server was seen asleep, which takes one
	// unanswered probe, so the server held it for the rest of the sleep.
	if answered-seen < 200*time.Millisecond {
		t.Fatalf("PING during the sleep answered %v after DebugSleep returned; want the server still asleep", answered-seen)
	}
}

// PauseWrites holds scripts and writes and serves reads; WaitWritable
// returns when the pause is over.
func TestPauseWritesHoldsWritesOnly(t *testing.T) {
	const d = 1500 * time.Millisecond
	srv := redistest.Start(t)
	ctx := context.Background()
	reader := srv.Client(t)
	writer := redis.NewClient(&redis.Options{Addr: srv.Addr, ReadTimeout: 10 * time.Second})
	defer writer.Close()
	if err := writer.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := srv.PauseWrites(ctx, d); err != nil {
		t.Fatal(err)
	}
	wrote := make(chan error, 1)
	go func() { wrote <- writer.Eval(ctx, "return redis.call('SET', KEYS[1], '1')", []string{"k"}).Err() }()
	if err := reader.Get(ctx, "k").Err(); err != redis.Nil {
		t.Fatalf("GET during the pause: %v; want redis.Nil at once", err)
	}
	select {
	case err := <-wrote:
		t.Fatalf("script with a write ran during CLIENT PAUSE WRITE (%v)", err)
	default:
	}
	if err := srv.WaitWritable(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-wrote; err != nil {
		t.Fatalf("script after the pause: %v", err)
	}
}
