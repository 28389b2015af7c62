// Command fencedsql shows a fenced SQL write: a holder that lost its lock
// while paused tries to write, and the database refuses, because the row
// remembers the newer holder's fencing token. It runs on SQLite (the pure-Go
// modernc.org/sqlite, no server) and lockgen's locktest Locker, which makes
// the lock change hands at once instead of after a lease.
//
//	go run .
package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"time"

	_ "modernc.org/sqlite"

	"github.com/lockgen/lockgen/locktest"
	"github.com/lockgen/lockgen/runtime"
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "fencedsql:", err)
		os.Exit(1)
	}
}

func run(w io.Writer) error {
	ctx := context.Background()
	db, err := sql.Open("sqlite", "file::memory:")
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // one in-memory database, not one per connection
	orders, err := NewOrders(ctx, db)
	if err != nil {
		return err
	}
	if err := orders.Add(ctx, "42", "paid"); err != nil {
		return err
	}

	l := locktest.New()
	defer l.Close()
	lock := runtime.Lock{Kind: runtime.Mutex, Key: "order:42", Lease: 30 * time.Second}
	held, err := l.Acquire(ctx, lock)
	if err != nil {
		return err
	}
	defer held.Release()
	token, _ := runtime.Fence(held.Context())

	// The holder pauses longer than its lease; another process takes the
	// lock and refunds the order.
	thief, err := l.Steal(lock)
	if err != nil {
		return err
	}
	newer, _ := runtime.Fence(thief.Context())
	if err := orders.SetStatus(ctx, "42", "refunded", newer); err != nil {
		return err
	}
	fmt.Fprintf(w, "new holder (fence %d) wrote: refunded\n", newer)

	// The first holder wakes and ships the order: refused by the database.
	err = orders.SetStatus(ctx, "42", "shipped", token)
	fmt.Fprintf(w, "paused holder (fence %d) wrote: shipped -> %v\n", token, err)
	status, fence, err := orders.Status(ctx, "42")
	fmt.Fprintf(w, "order 42: %s (fence %d)\n", status, fence)
	return err
}
