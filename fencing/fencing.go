package fencing

import (
	"context"
	"crypto/sha1"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/lua"
)

// ErrStaleFence is returned by Set when the key holds a newer token than
// the writer's: the writer's lock was lost and someone else has held it
// since, so its write must not land.
var ErrStaleFence = errors.New("fencing: stale fence, a newer holder has written")

// ErrInvalidFence is returned for a token outside 1..MaxFence; runtime.Fence
// never gives one.
var ErrInvalidFence = errors.New("fencing: invalid fence")

// ErrNotFound is returned by Get for a key that Set never wrote.
var ErrNotFound = errors.New("fencing: no fenced value at this key")

// MaxFence is the largest token the scripts accept: Lua numbers are
// doubles, exact up to 2^53. lockgen's tokens (server microseconds) stay far
// below it.
const MaxFence = 1 << 53

// The scripts, run like lockgen's own: EVALSHA, EVAL once on NOSCRIPT.
var (
	//go:embed set.lua
	setSource string
	//go:embed get.lua
	getSource string

	setScript = newScript("fenced_set", setSource)
	getScript = newScript("fenced_get", getSource)
)

func newScript(name, src string) *lua.Script {
	sum := sha1.Sum([]byte(src))
	return &lua.Script{Name: name, Source: src, SHA1: hex.EncodeToString(sum[:])}
}

// Set writes value at key if fence is not lower than the token of the
// value stored there, in one script call, and records fence with it. It
// returns an error wrapping ErrStaleFence, naming both tokens, when the
// key holds a newer token; nothing is written then. Writing again with the
// same token (the same grant) succeeds.
//
// b is where the data lives: goredisbackend.New(rdb) for any go-redis
// client (single node, Sentinel, Cluster), or a Locker's Backend() to write
// to the Redis the locks live in. The key is a hash with the fields "value"
// and "fence"; write it only through Set.
func Set(ctx context.Context, b backend.Backend, key, value string, fence int64) error {
	if fence < 1 || fence > MaxFence {
		return fmt.Errorf("%w: %d, want 1..2^53", ErrInvalidFence, fence)
	}
	v, err := b.Eval(ctx, backend.Call{Script: setScript, Keys: []string{key}, Args: []string{value, strconv.FormatInt(fence, 10)}})
	if err != nil {
		return fmt.Errorf("fencing: set %s: %w", key, err)
	}
	written, stored, err := pair(v)
	if err != nil {
		return fmt.Errorf("fencing: set %s: %w", key, err)
	}
	if written != 1 {
		return fmt.Errorf("%w: %s holds fence %d, the write had %d", ErrStaleFence, key, stored, fence)
	}
	return nil
}

// Get returns the value Set wrote last at key and its token, or an error
// wrapping ErrNotFound.
func Get(ctx context.Context, b backend.Backend, key string) (value string, fence int64, err error) {
	v, err := b.Eval(ctx, backend.Call{Script: getScript, Keys: []string{key}})
	if err != nil {
		return "", 0, fmt.Errorf("fencing: get %s: %w", key, err)
	}
	xs, ok := v.([]any)
	switch {
	case ok && len(xs) == 0:
		return "", 0, fmt.Errorf("%w: %s", ErrNotFound, key)
	case ok && len(xs) == 2:
		value, okv := xs[0].(string)
		fence, okf := xs[1].(int64)
		if okv && okf {
			return value, fence, nil
		}
	}
	return "", 0, fmt.Errorf("fencing: get %s: unexpected reply %v", key, v)
}

// pair reads the {int, int} reply of set.lua.
func pair(v any) (int64, int64, error) {
	xs, ok := v.([]any)
	if ok && len(xs) == 2 {
		a, oka := xs[0].(int64)
		b, okb := xs[1].(int64)
		if oka && okb {
			return a, b, nil
		}
	}
	return 0, 0, fmt.Errorf("unexpected reply %v", v)
}
