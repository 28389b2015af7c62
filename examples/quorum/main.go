// Command quorum shows the quorum Locker (RedLock): one mutex taken on
// three independent Redis servers, granted by a majority, with fencing
// tokens that rise from holder to holder. Run it with
// -redis host:port,host:port,host:port, or without flags on three
// in-process servers (the embedded backend).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/redis/go-redis/v9"

	"github.com/lockgen/lockgen/embedded"
	"github.com/lockgen/lockgen/quorum"
	"github.com/lockgen/lockgen/runtime"
)

func main() {
	addrs := flag.String("redis", "", "comma-separated addresses of 3 or more independent Redis servers (default: 3 in-process servers)")
	flag.Parse()
	if err := run(os.Stdout, splitAddrs(*addrs)); err != nil {
		fmt.Fprintln(os.Stderr, "quorum:", err)
		os.Exit(1)
	}
}

func splitAddrs(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// newLocker returns one process's quorum Locker: on the servers at addrs,
// or on the in-process servers backends if addrs is empty.
func newLocker(addrs []string, backends []backend.Backend) (*runtime.Locker, func(), error) {
	if len(addrs) == 0 {
		l, err := quorum.NewWithBackends(backends)
		return l, func() {}, err
	}
	clients := make([]redis.UniversalClient, len(addrs))
	for i, a := range addrs {
		clients[i] = redis.NewClient(&redis.Options{Addr: a})
	}
	closeAll := func() {
		for _, c := range clients {
			c.Close()
		}
	}
	l, err := quorum.New(clients)
	if err != nil {
		closeAll()
	}
	return l, closeAll, err
}

func run(out io.Writer, addrs []string) error {
	var shared []backend.Backend
	if len(addrs) == 0 {
		for range 3 {
			shared = append(shared, embedded.NewBackend(nil))
		}
	}
	// Two Lockers stand for two processes on the same servers.
	alice, closeA, err := newLocker(addrs, shared)
	if err != nil {
		return err
	}
	defer closeA()
	defer alice.Close()
	bob, closeB, err := newLocker(addrs, shared)
	if err != nil {
		return err
	}
	defer closeB()
	defer bob.Close()

	ctx := context.Background()
	job := runtime.Lock{Kind: runtime.Mutex, Key: "nightly-report", Lease: 10 * time.Second}
	held, err := alice.Acquire(ctx, job)
	if err != nil {
		return err
	}
	first, _ := runtime.Fence(held.Context())
	fmt.Fprintf(out, "alice holds nightly-report on a majority, fencing token %d\n", first)

	once := job
	once.Wait = runtime.NoWait
	_, err = bob.Acquire(ctx, once)
	fmt.Fprintf(out, "bob trying once while alice holds it: %v\n", err)
	if !errors.Is(err, runtime.ErrNotAcquired) {
		return fmt.Errorf("bob got a lock alice holds: %v", err)
	}

	// Other kinds are refused: RedLock is defined for the mutex.
	_, err = bob.Acquire(ctx, runtime.Lock{Kind: runtime.Fair, Key: "queue"})
	fmt.Fprintf(out, "a fair lock on a quorum Locker: %v\n", err)
	if !errors.Is(err, runtime.ErrInvalidLock) {
		return fmt.Errorf("a fair lock on a quorum Locker: %v, want ErrInvalidLock", err)
	}

	if err := held.Release(); err != nil {
		return err
	}
	next, err := bob.Acquire(ctx, job)
	if err != nil {
		return err
	}
	defer next.Release()
	second, _ := runtime.Fence(next.Context())
	fmt.Fprintf(out, "bob holds it after alice released, fencing token %d (above alice's: %v)\n", second, second > first)
	if second <= first {
		return fmt.Errorf("fencing token %d after %d", second, first)
	}
	return nil
}
