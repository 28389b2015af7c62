package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockgen/lockgen/locktest"
	"github.com/lockgen/lockgen/runtime"
)

// openOrders opens a SQLite database file in the test's directory (several
// connections, as a service would have) with order 42 in it.
func openOrders(t *testing.T) *Orders {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "orders.db")+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()
	o, err := NewOrders(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Add(ctx, "42", "new"); err != nil {
		t.Fatal(err)
	}
	return o
}

// The fenced UPDATE writes a token at least as new as the stored one and
// refuses an older one, leaving the row as it was.
func TestSetStatus(t *testing.T) {
	o := openOrders(t)
	ctx := context.Background()
	steps := []struct {
		status string
		fence  int64
		stale  bool
		want   string // status after
	}{
		{"paid", 100, false, "paid"},
		{"late", 99, true, "paid"},
		{"packed", 100, false, "packed"}, // the same grant again
		{"shipped", 1795263116976678, false, "shipped"},
		{"late again", 1795263116976677, true, "shipped"},
	}
	for _, s := range steps {
		err := o.SetStatus(ctx, "42", s.status, s.fence)
		if s.stale != errors.Is(err, ErrStaleFence) || (!s.stale && err != nil) {
			t.Fatalf("%s with fence %d: %v, stale=%v expected", s.status, s.fence, err, s.stale)
		}
		got, _, err := o.Status(ctx, "42")
		if err != nil || got != s.want {
			t.Fatalf("after %s: %q, %v; want %q", s.status, got, err, s.want)
		}
	}
	if err := o.SetStatus(ctx, "7", "paid", 1); !errors.Is(err, ErrNoOrder) {
		t.Fatalf("unknown order: %v, want ErrNoOrder", err)
	}
}

// Writers racing with tokens in any order: whatever order the database
// sees them in, the row ends with the newest token's status, and every
// write older than one already applied was refused.
func TestRacingWritersNewestWins(t *testing.T) {
	o := openOrders(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	fences := rand.Perm(40)
	var wg sync.WaitGroup
	errs := make([]error, len(fences))
	for i, f := range fences {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = o.SetStatus(ctx, "42", fmt.Sprintf("by %d", f+1), int64(f+1))
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil && !errors.Is(err, ErrStaleFence) {
			t.Fatalf("writer with fence %d: %v", fences[i]+1, err)
		}
	}
	status, fence, err := o.Status(ctx, "42")
	if err != nil || status != "by 40" || fence != 40 {
		t.Fatalf("row after the race: %q fence %d, %v; want by 40, fence 40", status, fence, err)
	}
}

// A holder whose lock was stolen while it paused cannot write, although it
// got its token legitimately; the thief can. With locktest this takes
// milliseconds, not a lease.
func TestPausedHolderRefused(t *testing.T) {
	o := openOrders(t)
	l := locktest.New()
	defer l.Close()
	ctx := context.Background()
	lock := runtime.Lock{Kind: runtime.Mutex, Key: "order:42", Lease: time.Minute}
	held, err := l.Acquire(ctx, lock)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	token, _ := runtime.Fence(held.Context())
	if err := o.SetStatus(ctx, "42", "paid", token); err != nil {
		t.Fatal(err)
	}
	thief, err := l.Steal(lock)
	if err != nil {
		t.Fatal(err)
	}
	if context.Cause(held.Context()) == nil {
		t.Fatal("the holder was not told it lost the lock")
	}
	newer, _ := runtime.Fence(thief.Context())
	if err := o.SetStatus(ctx, "42", "refunded", newer); err != nil {
		t.Fatalf("the new holder's write: %v", err)
	}
	if err := o.SetStatus(ctx, "42", "shipped", token); !errors.Is(err, ErrStaleFence) {
		t.Fatalf("the paused holder's write: %v, want ErrStaleFence", err)
	}
	if s, f, _ := o.Status(ctx, "42"); s != "refunded" || f != newer {
		t.Fatalf("row: %q fence %d, want refunded, %d", s, f, newer)
	}
}

// The command's output tells the story in three lines, ending refunded.
func TestRun(t *testing.T) {
	var out strings.Builder
	if err := run(&out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], "stale fence") || !strings.HasPrefix(lines[2], "order 42: refunded") {
		t.Fatalf("output:\n%s", out.String())
	}
}
