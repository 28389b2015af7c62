package fencing_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/lockgen/lockgen/embedded"
	"github.com/lockgen/lockgen/fencing"
	"github.com/lockgen/lockgen/runtime"
)

// Two holders of one lock, one after the other, write the same key; the
// first one's write arrives last, with its older token, and is refused.
func ExampleSet() {
	ctx := context.Background()
	l := embedded.New() // runtime.New(rdb) on a real Redis
	defer l.Close()
	lock := runtime.Lock{Kind: runtime.Mutex, Key: "order:42"}

	first, _ := l.Acquire(ctx, lock)
	old, _ := runtime.Fence(first.Context())
	first.Release() // (in real life: its lease ran out while it was paused)

	second, _ := l.Acquire(ctx, lock)
	defer second.Release()
	newer, _ := runtime.Fence(second.Context())

	fmt.Println(fencing.Set(ctx, l.Backend(), "order:42:status", "refunded", newer))
	err := fencing.Set(ctx, l.Backend(), "order:42:status", "shipped", old)
	fmt.Println(errors.Is(err, fencing.ErrStaleFence))
	status, _, _ := fencing.Get(ctx, l.Backend(), "order:42:status")
	fmt.Println(status)
	// Output:
	// <nil>
	// true
	// refunded
}
