package faults

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"time"

	"github.com/lockgen/lockgen/runtime"
	"github.com/redis/go-redis/v9"
)

// The counter child (role "counter") increments a counter in Redis under a
// mutex, in a loop, until it reads "stop" (or stdin ends). The counter is
// kept by a fenced store: every read and write carries the holder's fence,
// and the store refuses one older than the newest it has seen, as storage
// must when holders can pause (fencedStore). The read and the write are
// separate calls with work in between, so that two holders at once would
// lose an update unless the fences stop one of them. The store calls do
// not use the holder's context (careless code might not), so a holder that
// lost its lock still reaches the store, and only its fence stops it.
//
// It reports, per hold:
//
//	grant HOLDER FENCE CALLED RETURNED
//	done HOLDER FENCE READ WRITE RELEASE    each ok, stale, dup or err (write: skipped after a failed read)
//	failed HOLDER CALLED RETURNED ERROR...  an Acquire that returned an error
func runCounterChild(rdb *redis.Client, out *lineWriter, in io.Reader) error {
	lease, err := time.ParseDuration(os.Getenv(childLeaseEnv))
	if err != nil {
		return err
	}
	hold, err := time.ParseDuration(os.Getenv(childHoldEnv))
	if err != nil {
		return err
	}
	stop := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(in)
		for sc.Scan() && sc.Text() != "stop" {
		}
		close(stop)
	}()
	ids := newIDSource(os.Getenv(childTagEnv) + "k")
	l := runtime.New(rdb, runtime.WithKeyPrefix(os.Getenv(childPrefixEnv)), runtime.WithHolderIDs(ids.next))
	defer l.Close()
	store := fencedStore{rdb: rdb}
	for {
		select {
		case <-stop:
			return nil
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		called := nowNS()
		h, err := l.Acquire(ctx, runtime.Lock{Kind: runtime.Mutex, Key: "counter", Lease: lease})
		returned := nowNS()
		if err != nil {
			out.say("failed", ids.last(), called, returned, oneLine(err))
			cancel()
			continue
		}
		holder := ids.last()
		fence, _ := runtime.Fence(h.Context())
		out.say("grant", holder, fence, called, returned)
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		n, read := store.read(sctx, fence, holder)
		time.Sleep(hold) // the work done under the lock
		write := "skipped"
		if read == "ok" {
			write = store.write(sctx, fence, holder, n+1)
		}
		scancel()
		release := "ok"
		if err := h.Release(); err != nil {
			release = "err"
			if errors.Is(err, runtime.ErrNotHeld) {
				release = "notheld"
			}
		}
		out.say("done", holder, fence, read, write, release)
		cancel()
	}
}

// fencedStore is a counter behind fencing: it remembers the highest fence
// it has seen and the holder that brought it, and refuses a lower fence
// ("stale") or the same fence from another holder ("dup", which a lock
// must never grant twice; counted in the hash too).
type fencedStore struct{ rdb *redis.Client }

// Keys of the store; outside the Locker's prefix, so the trace scan of the
// lock keys does not see them.
var storeKeys = []string{"store:counter", "store:fence", "store:accepted"}

const fenceCheck = `
local f = tonumber(ARGV[1])
local max = tonumber(redis.call('HGET', KEYS[2], 'fence') or '0')
if f < max then return 'stale' end
if f == max and redis.call('HGET', KEYS[2], 'holder') ~= ARGV[2] then
  redis.call('HINCRBY', KEYS[2], 'dup', 1)
  return 'dup'
end
redis.call('HSET', KEYS[2], 'fence', ARGV[1], 'holder', ARGV[2])
`

var (
	storeRead = redis.NewScript(`local function check()` + fenceCheck + ` end
local refused = check()
if refused then return {refused, 0} end
return {'ok', tonumber(redis.call('GET', KEYS[1]) or '0')}`)
	// A write that go-redis retries after a dropped connection must count
	// once: the hash remembers the last holder that wrote.
	storeWrite = redis.NewScript(`if redis.call('HGET', KEYS[2], 'wrote') == ARGV[2] then return 'ok' end
local function check()` + fenceCheck + ` end
local refused = check()
if refused then return refused end
redis.call('SET', KEYS[1], ARGV[3])
redis.call('HSET', KEYS[2], 'wrote', ARGV[2])
redis.call('INCR', KEYS[3])
return 'ok'`)
)

// read returns the counter and "ok", or "stale", "dup" or "err".
func (s fencedStore) read(ctx context.Context, fence int64, holder string) (int64, string) {
	v, err := storeRead.Run(ctx, s.rdb, storeKeys, fence, holder).Slice()
	if err != nil || len(v) != 2 {
		return 0, "err"
	}
	status, _ := v[0].(string)
	n, _ := v[1].(int64)
	return n, status
}

// write sets the counter to n and counts the write as accepted, unless the
// fence is refused.
func (s fencedStore) write(ctx context.Context, fence int64, holder string, n int64) string {
	status, err := storeWrite.Run(ctx, s.rdb, storeKeys, fence, holder, n).Text()
	if err != nil {
		return "err"
	}
	return status
}
