package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/lockgen/lockgen/embedded"
	"github.com/lockgen/lockgen/runtime"
)

// The imperative API: what a generated wrapper does, by hand.
func Example() {
	l := embedded.New() // runtime.New(rdb) with a go-redis client in production
	defer l.Close()

	pay := func(ctx context.Context, orderID string) (err error) {
		held, err := l.Acquire(ctx, runtime.Lock{Kind: runtime.Mutex, Key: "order:" + runtime.EscapeKeyPart(orderID), Lease: 10 * time.Second})
		if err != nil {
			return err
		}
		defer held.ReleaseInto(&err)
		_, ok := runtime.Fence(held.Context())
		fmt.Println("paying", orderID, "with a fencing token:", ok)
		return nil
	}
	if err := pay(context.Background(), "42/A"); err != nil {
		fmt.Println(err)
	}
	// Output: paying 42/A with a fencing token: true
}

// onbusy=skip: run a job only if no other instance runs it.
func ExampleLocker_Acquire_skipWhenBusy() {
	l := embedded.New()
	defer l.Close()
	job := runtime.Lock{Kind: runtime.Mutex, Key: "nightly-report", Wait: runtime.NoWait}

	first, _ := l.Acquire(context.Background(), job)
	_, err := l.Acquire(context.Background(), job)
	fmt.Println("second instance skips:", errors.Is(err, runtime.ErrNotAcquired))
	first.Release()
	// Output: second instance skips: true
}

// Re-entry: a nested call with the holder's context does not wait for itself.
func ExampleHeld_Context() {
	l := embedded.New()
	defer l.Close()
	lock := runtime.Lock{Kind: runtime.Mutex, Key: "account:7"}

	outer, _ := l.Acquire(context.Background(), lock)
	inner, err := l.Acquire(outer.Context(), lock)
	fmt.Println("re-entered:", err == nil)
	inner.Release()
	fmt.Println("outer release:", outer.Release())
	fmt.Println("again:", errors.Is(outer.Release(), runtime.ErrNotHeld))
	// Output:
	// re-entered: true
	// outer release: <nil>
	// again: true
}

// Logging lock events with log/slog.
func ExampleSlogObserver() {
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			switch a.Key {
			case slog.TimeKey, "holder", "fence", "waited", "held":
				return slog.Attr{} // vary from run to run
			}
			return a
		},
	}))
	l := embedded.New(runtime.WithObserver(runtime.SlogObserver(logger)))
	defer l.Close()
	h, _ := l.Acquire(context.Background(), runtime.Lock{Kind: runtime.Semaphore, Key: "pool", Permits: 3})
	h.Release()
	// Output:
	// level=INFO msg="lockgen acquired" lock.event=acquired lock.kind=semaphore lock.key=pool
	// level=INFO msg="lockgen released" lock.event=released lock.kind=semaphore lock.key=pool
}

// onbusy=skip returns a nil error whether the method ran or not;
// TrackSkips tells the caller which.
func ExampleTrackSkips() {
	l := embedded.New()
	defer l.Close()
	job := runtime.Lock{Kind: runtime.Mutex, Key: "nightly", Wait: runtime.NoWait, Method: "Jobs.Nightly"}

	// What the generated wrapper of a //lock:mutex key=nightly onbusy=skip method does.
	nightly := func(ctx context.Context) (err error) {
		held, err := l.Acquire(ctx, job)
		if err != nil {
			if l.SkipBusy(ctx, "Jobs.Nightly", err) {
				return nil
			}
			return err
		}
		defer held.ReleaseInto(&err)
		return nil // the job's work
	}

	other, _ := l.Acquire(context.Background(), job) // another instance runs the job
	ctx, skips := runtime.TrackSkips(context.Background())
	err := nightly(ctx)
	fmt.Println("err:", err, "skipped:", skips.Skipped(), skips.Methods())
	other.Release()

	ctx, skips = runtime.TrackSkips(context.Background())
	err = nightly(ctx)
	fmt.Println("err:", err, "skipped:", skips.Skipped())
	// Output:
	// err: <nil> skipped: true [Jobs.Nightly]
	// err: <nil> skipped: false
}

// Who holds a lock, what a busy caller is told, and taking the lock back
// as an operator would (lockgen locks does the same from a shell).
func ExampleLocker_Inspect() {
	ctx := context.Background()
	b := embedded.NewBackend(nil) // two processes sharing one Redis
	l := runtime.NewWithBackend(b, runtime.WithHolderIDs(func() string { return "billing-7:4711:1" }))
	defer l.Close()
	lock := runtime.Lock{Kind: runtime.Mutex, Key: "order:42", Lease: 30 * time.Second}
	held, err := l.Acquire(ctx, lock)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer held.Release()

	st, _ := l.Inspect(ctx, lock)
	h := st.Holders[0]
	fmt.Println(h.ID, h.Kind, h.LeaseLeft > 29*time.Second)

	other := runtime.NewWithBackend(b, runtime.WithHolderIDs(func() string { return "billing-8:99:1" }))
	defer other.Close()
	once := lock
	once.Wait = runtime.NoWait
	_, err = other.Acquire(ctx, once)
	var busy *runtime.BusyError
	fmt.Println(errors.Is(err, runtime.ErrNotAcquired), errors.As(err, &busy) && busy.Holder == "billing-7:4711:1")

	n, _ := other.ForceRelease(ctx, lock)
	st, _ = l.Inspect(ctx, lock)
	fmt.Println(n, st.Held(), st.LastFence == h.Fence)
	// Output:
	// billing-7:4711:1 mutex true
	// true true
	// 1 false true
}
