package locktest_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lockgen/lockgen/embedded"
	"github.com/lockgen/lockgen/fencing"
	"github.com/lockgen/lockgen/locktest"
	"github.com/lockgen/lockgen/runtime"
)

// A holder pauses, its lock is taken by someone else meanwhile, and its
// late write is refused by the fenced store; the test takes milliseconds,
// not a lease.
func Example() {
	l := locktest.New()
	defer l.Close()
	ctx := context.Background()
	store := embedded.NewBackend(l.Server()) // the data, on the same server, no faults
	lock := runtime.Lock{Kind: runtime.Mutex, Key: "order:42", Lease: 30 * time.Second}

	held, err := l.Acquire(ctx, lock)
	if err != nil {
		panic(err)
	}
	defer held.Release()
	token, _ := runtime.Fence(held.Context())

	// The holder pauses; meanwhile another process takes the lock and writes.
	thief, err := l.Steal(lock)
	if err != nil {
		panic(err)
	}
	newer, _ := runtime.Fence(thief.Context())
	fmt.Println("newer holder writes:", fencing.Set(ctx, store, "order:42:status", "refunded", newer))

	// The holder wakes up: its context already says so ...
	fmt.Println("lost:", errors.Is(context.Cause(held.Context()), runtime.ErrLockLost))
	// ... and a write it was about to make is refused anyway.
	err = fencing.Set(ctx, store, "order:42:status", "shipped", token)
	fmt.Println("late write refused:", errors.Is(err, fencing.ErrStaleFence))
	v, _, _ := fencing.Get(ctx, store, "order:42:status")
	fmt.Println("status:", v)
	// Output:
	// newer holder writes: <nil>
	// lost: true
	// late write refused: true
	// status: refunded
}

// A test of code that must give up when its lock is lost.
func ExampleLocker_Expire() {
	l := locktest.New()
	defer l.Close()
	lock := runtime.Lock{Kind: runtime.Fair, Key: "report:daily"}
	held, err := l.Acquire(context.Background(), lock)
	if err != nil {
		panic(err)
	}
	defer held.Release()

	if err := l.Expire(lock); err != nil {
		panic(err)
	}
	// Already cancelled: no waiting for the watchdog's next renewal.
	<-held.Context().Done()
	fmt.Println("lost:", errors.Is(context.Cause(held.Context()), runtime.ErrLockLost))
	// Output: lost: true
}

// A test whose code under test takes its lock on another goroutine waits
// until the lock is held, then takes it away.
func ExampleLocker_WaitHeld() {
	l := locktest.New()
	defer l.Close()
	lock := runtime.Lock{Kind: runtime.Mutex, Key: "job:nightly"}

	stopped := make(chan error)
	go func() { // the worker under test: runs until its lock is lost
		held, err := l.Acquire(context.Background(), lock)
		if err != nil {
			stopped <- err
			return
		}
		defer held.Release()
		<-held.Context().Done()
		stopped <- context.Cause(held.Context())
	}()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	state, err := l.WaitHeld(ctx, lock)
	if err != nil {
		panic(err)
	}
	fmt.Println("holders:", len(state.Holders))
	if err := l.Expire(lock); err != nil {
		panic(err)
	}
	fmt.Println("worker stopped on a lost lock:", errors.Is(<-stopped, runtime.ErrLockLost))
	// Output:
	// holders: 1
	// worker stopped on a lost lock: true
}
