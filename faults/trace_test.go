package faults

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// A trace is a place in Redis where a holder id still appears: a lock it
// holds, a queue or heir entry of a waiter, a reader's field. The scan
// needs to know nothing about the data model, so it keeps working when the
// model changes: every key under the prefix is read whole.

// traces returns every trace of holder under prefix, as "key (type, PTTL):
// where". SCAN with MATCH, never KEYS; keys that expire meanwhile are
// skipped.
func traces(ctx context.Context, rdb *redis.Client, prefix, holder string) ([]string, error) {
	var found []string
	var cursor uint64
	for round := 0; round < 10000; round++ {
		keys, next, err := rdb.Scan(ctx, cursor, prefix+"*", 500).Result()
		if err != nil {
			return nil, fmt.Errorf("SCAN: %w", err)
		}
		for _, k := range keys {
			where, err := keyTraces(ctx, rdb, k, holder)
			if err != nil {
				return nil, err
			}
			if len(where) == 0 {
				continue
			}
			pttl, _ := rdb.PTTL(ctx, k).Result()
			typ, _ := rdb.Type(ctx, k).Result()
			found = append(found, fmt.Sprintf("%s (%s, PTTL %v): %s", k, typ, pttl.Round(time.Millisecond), strings.Join(where, "; ")))
		}
		if cursor = next; cursor == 0 {
			return found, nil
		}
	}
	return nil, fmt.Errorf("SCAN of %s* did not finish in 10000 rounds", prefix)
}

// keyTraces returns where in key holder appears.
func keyTraces(ctx context.Context, rdb *redis.Client, key, holder string) ([]string, error) {
	typ, err := rdb.Type(ctx, key).Result()
	if err != nil {
		return nil, err
	}
	var items []string // what to look in, each labelled
	switch typ {
	case "none":
		return nil, nil // expired since the SCAN
	case "string":
		v, err := rdb.Get(ctx, key).Result()
		if err == redis.Nil {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		items = append(items, "value "+v)
	case "hash":
		m, err := rdb.HGetAll(ctx, key).Result()
		if err != nil {
			return nil, err
		}
		for f, v := range m {
			items = append(items, "field "+f+" = "+v)
		}
	case "zset":
		zs, err := rdb.ZRangeWithScores(ctx, key, 0, -1).Result()
		if err != nil {
			return nil, err
		}
		for _, z := range zs {
			items = append(items, fmt.Sprintf("member %v (score %.0f)", z.Member, z.Score))
		}
	case "set":
		ms, err := rdb.SMembers(ctx, key).Result()
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			items = append(items, "member "+m)
		}
	case "list":
		ms, err := rdb.LRange(ctx, key, 0, -1).Result()
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			items = append(items, "element "+m)
		}
	default:
		return []string{"a " + typ + " key the scan cannot read"}, nil
	}
	var where []string
	for _, it := range items {
		if strings.Contains(it, holder) {
			where = append(where, it)
		}
	}
	return where, nil
}

// noTrace fails the test (without stopping it) if holder still appears
// anywhere under the prefix; why says which invariant that breaks.
func noTrace(t *testing.T, e *env, holder, why string) bool {
	t.Helper()
	found, err := traces(ctxFor(t, 10*time.Second), e.direct, e.prefix, holder)
	if err != nil {
		t.Fatalf("scan for %s: %v", holder, err)
	}
	if len(found) > 0 {
		t.Errorf("%s: holder %s is still in Redis:\n\t%s", why, holder, strings.Join(found, "\n\t"))
		return false
	}
	return true
}

// checkGone is invariant (b), checked right after Release returned nil.
func checkGone(t *testing.T, e *env, holder string, releaseErr error) {
	t.Helper()
	if releaseErr == nil {
		noTrace(t, e, holder, "(b) Release returned nil")
	}
}

// checkFailedAcquire is invariant (a) (and (c) for a waiter): after an
// Acquire that returned an error, once the clean-up has run, nothing of
// that call is left.
func checkFailedAcquire(t *testing.T, e *env, s *subject, o outcome, what string) {
	t.Helper()
	if o.err == nil {
		t.Fatalf("%s: Acquire succeeded; the case needs it to fail", what)
	}
	waitCleanedUp(t, e, s, o.holder)
	noTrace(t, e, o.holder, fmt.Sprintf("(a) %s: Acquire returned %q, then the clean-up ran", what, o.err))
}
