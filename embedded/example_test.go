package embedded_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lockgen/lockgen/embedded"
	"github.com/lockgen/lockgen/runtime"
)

// A Locker with no Redis server, for a demo or a unit test.
func ExampleNew() {
	l := embedded.New()
	defer l.Close()
	ctx := context.Background()

	held, err := l.Acquire(ctx, runtime.Lock{Kind: runtime.Mutex, Key: "report:daily", Wait: runtime.NoWait})
	if err != nil {
		fmt.Println(err)
		return
	}
	// A second run of the job, elsewhere in the fleet, finds it busy.
	_, err = l.Acquire(ctx, runtime.Lock{Kind: runtime.Mutex, Key: "report:daily", Wait: runtime.NoWait})
	fmt.Println("second run busy:", errors.Is(err, runtime.ErrNotAcquired))

	fmt.Println("release:", held.Release())
	// Output:
	// second run busy: true
	// release: <nil>
}

// Two Lockers on one Backend play two processes sharing one Redis: the
// second waits for the first and is woken by its release.
func ExampleNewBackend() {
	b := embedded.NewBackend(nil)
	api := runtime.NewWithBackend(b)
	defer api.Close()
	worker := runtime.NewWithBackend(b)
	defer worker.Close()
	ctx := context.Background()
	lock := runtime.Lock{Kind: runtime.Fair, Key: "order:42", Lease: 10 * time.Second}

	held, _ := api.Acquire(ctx, lock)
	done := make(chan struct{})
	go func() {
		defer close(done)
		h, err := worker.Acquire(ctx, lock)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println("worker has order:42")
		h.Release()
	}()
	time.Sleep(10 * time.Millisecond)
	fmt.Println("api releases order:42")
	held.Release()
	<-done
	// Output:
	// api releases order:42
	// worker has order:42
}
