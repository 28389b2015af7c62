// Command imperative shows the runtime API without annotations: what the
// generated wrappers do, written by hand. It runs on the embedded backend,
// or on Redis with -redis host:port.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockgen/lockgen/embedded"
	"github.com/lockgen/lockgen/runtime"
)

func main() {
	addr := flag.String("redis", "", "Redis address host:port (default: the embedded backend)")
	flag.Parse()
	if err := run(*addr); err != nil {
		fmt.Fprintln(os.Stderr, "imperative:", err)
		os.Exit(1)
	}
}

func run(addr string) error {
	var locker *runtime.Locker
	if addr != "" {
		locker = runtime.New(redis.NewClient(&redis.Options{Addr: addr}))
	} else {
		locker = embedded.New()
	}
	defer locker.Close()
	ctx := context.Background()
	if err := holdOne(ctx, locker); err != nil {
		return err
	}
	return transfers(ctx, locker)
}

// holdOne takes one lock around a piece of work, re-enters it from the
// held context, shows that another caller is refused, and gives it back.
func holdOne(ctx context.Context, locker *runtime.Locker) error {
	// One lock, held around a piece of work. The key's variable part goes
	// through EscapeKeyPart, as generated code does.
	userID := "u:17/eu" // ':' and '/' are escaped, so no other user's key can collide
	held, err := locker.Acquire(ctx, runtime.Lock{
		Kind:  runtime.Mutex,
		Key:   "profile:" + runtime.EscapeKeyPart(userID),
		Lease: 5 * time.Second,
	})
	if err != nil {
		return err
	}
	fence, _ := runtime.Fence(held.Context())
	fmt.Printf("holding profile:%s with fencing token %d\n", runtime.EscapeKeyPart(userID), fence)

	// The same lock again, from the held context: re-entry, same token.
	inner, err := locker.Acquire(held.Context(), runtime.Lock{Kind: runtime.Mutex, Key: "profile:" + runtime.EscapeKeyPart(userID)})
	if err != nil {
		return err
	}
	innerFence, _ := runtime.Fence(inner.Context())
	fmt.Printf("re-entered from the same call chain, token %d (same: %v)\n", innerFence, innerFence == fence)
	if innerFence != fence {
		return fmt.Errorf("re-entry changed the fencing token: %d, then %d", fence, innerFence)
	}
	if err := inner.Release(); err != nil {
		return err
	}

	// Someone else (a fresh context) cannot take it while we hold it.
	_, err = locker.Acquire(ctx, runtime.Lock{Kind: runtime.Mutex, Key: "profile:" + runtime.EscapeKeyPart(userID), Wait: runtime.NoWait})
	fmt.Printf("another caller trying once: %v (errors.Is ErrNotAcquired: %v)\n", err, errors.Is(err, runtime.ErrNotAcquired))
	if !errors.Is(err, runtime.ErrNotAcquired) {
		return fmt.Errorf("a second holder got a held mutex: %v", err)
	}

	if err := held.Release(); err != nil {
		return err
	}
	again := held.Release()
	fmt.Printf("released; releasing again: %v\n", again)
	if !errors.Is(again, runtime.ErrNotHeld) {
		return fmt.Errorf("a second release returned %v, want ErrNotHeld", again)
	}
	return nil
}

// transfers takes two accounts' locks in two goroutines that list them in
// opposite orders: neither deadlocks.
func transfers(ctx context.Context, locker *runtime.Locker) error {
	// Several keys, all or nothing, taken in one canonical order whatever
	// order they are listed in, so two transfers can never deadlock.
	var wg sync.WaitGroup
	for _, pair := range [][2]string{{"alice", "bob"}, {"bob", "alice"}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h, err := locker.Acquire(ctx,
				runtime.Lock{Kind: runtime.Mutex, Key: "account:" + pair[0], Lease: 2 * time.Second},
				runtime.Lock{Kind: runtime.Mutex, Key: "account:" + pair[1], Lease: 2 * time.Second},
			)
			if err != nil {
				fmt.Println("transfer failed:", err)
				return
			}
			defer h.Release()
			fmt.Printf("transfer %s -> %s holds both accounts\n", pair[0], pair[1])
			time.Sleep(20 * time.Millisecond)
		}()
	}
	wg.Wait()
	return nil
}
