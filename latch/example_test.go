package latch_test

import (
	"context"
	"fmt"
	"time"

	"github.com/lockgen/lockgen/embedded"
	"github.com/lockgen/lockgen/latch"
)

// Start the migration when all 3 shards have drained: each shard counts
// the latch down once under its own name (a retry does not count again),
// and the migrators wait for it to open.
func ExampleNew() {
	l := embedded.New() // runtime.New(rdb) with a go-redis client in production
	defer l.Close()
	ctx := context.Background()
	drained := latch.New(l, "drained:run-7", latch.WithTTL(time.Hour))
	if ok, err := drained.TrySetCount(ctx, 3); !ok || err != nil {
		fmt.Println("already set:", ok, err)
		return
	}

	opened := make(chan error, 1)
	go func() { opened <- drained.Await(ctx) }() // the migrator, in any process

	for _, shard := range []string{"shard-1", "shard-2", "shard-2", "shard-3"} {
		left, err := drained.CountDownAs(ctx, shard)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(shard, "drained,", left, "to go")
	}
	if err := <-opened; err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("migrating")
	// Output:
	// shard-1 drained, 2 to go
	// shard-2 drained, 1 to go
	// shard-2 drained, 1 to go
	// shard-3 drained, 0 to go
	// migrating
}
