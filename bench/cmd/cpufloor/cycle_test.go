package main

import (
	"context"
	"regexp"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/lockgen/lockgen/redistest"
)

// Every cycle the floor compares must do the work it is named for: each
// key locked, its counter incremented once, and the lock given back (a
// tombstone with a fence for the fenced shapes, no key for redislock's).
func TestEveryCycleLocksCountsAndReleases(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	released := map[string]*regexp.Regexp{
		"lockgen scripts": regexp.MustCompile(`^! [0-9]{10,} -$`),
		"redislock shape": nil,
	}
	for _, c := range cycles(rdb) {
		const n = 10
		if _, err := runCycle(ctx, rdb, c, 4, n); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		want, ok := released[c.name]
		if !ok {
			want = regexp.MustCompile(`^! 5 -$`)
		}
		for _, k := range []string{"fl:0", "fl:9"} {
			if got, err := rdb.Get(ctx, k+":n").Int(); err != nil || got != 1 {
				t.Errorf("%s: counter %s = %d, %v; want 1", c.name, k, got, err)
			}
			v, err := rdb.Get(ctx, k).Result()
			switch {
			case want == nil && err != redis.Nil:
				t.Errorf("%s: %s = %q, %v; want no key", c.name, k, v, err)
			case want != nil && (err != nil || !want.MatchString(v)):
				t.Errorf("%s: %s = %q, %v; want %s", c.name, k, v, err, want)
			}
		}
	}
}
