package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockgen/lockgen/lua"
	"github.com/lockgen/lockgen/runtime"
	"github.com/redis/go-redis/v9"
)

// fencedStore is storage that remembers the largest fence it has seen and
// refuses writes with a smaller one: what a fencing token is for.
type fencedStore struct {
	mu   sync.Mutex
	last int64
	data []string
}

var errStaleFence = errors.New("fenced store: stale fence")

func (s *fencedStore) write(fence int64, v string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if fence < s.last {
		return fmt.Errorf("%w: %d after %d", errStaleFence, fence, s.last)
	}
	s.last = fence
	s.data = append(s.data, v)
	return nil
}

// A failover to a replica whose clock is behind the master's must not give
// a new holder a smaller fence than a stale one's. The real servers share
// this machine's clock, so the master's clock running ahead is modelled by
// the last fence it left: a tombstone 20 s in the future, as a release on a
// master whose clock is 20 s ahead leaves. The stale holder's lease then
// simply ends (no release), the replica is promoted (REPLICAOF NO ONE), and
// a new holder takes the lock there: its fence is above the stale one,
// whose late write the fenced store refuses.
func TestFenceRisesAcrossFailoverToAClockBehind(t *testing.T) {
	t.Parallel()
	master, replica := startReplicated(t)
	prefix := uniquePrefix(t)
	ctx := ctxTimeout(t, 30*time.Second)
	kinds := []struct {
		lock   runtime.Lock
		family string
		hash   bool
	}{
		{runtime.Lock{Kind: runtime.Mutex, Key: "m"}, "mutex", false},
		{runtime.Lock{Kind: runtime.Fair, Key: "f"}, "fair", false},
		{runtime.Lock{Kind: runtime.Read, Key: "r"}, "rw", true},
		{runtime.Lock{Kind: runtime.Write, Key: "w"}, "rw", true},
		{runtime.Lock{Kind: runtime.Semaphore, Key: "s", Permits: 1}, "sem", true},
	}
	ahead := time.Now().Add(20 * time.Second).UnixMicro()
	old := runtime.New(master, runtime.WithKeyPrefix(prefix))
	defer old.Close()
	stale := make([]int64, len(kinds))
	for i, k := range kinds {
		key := prefix + k.family + ":{" + k.lock.Key + "}"
		plantTombstone(ctx, t, master, key, ahead, k.hash)
		lock := k.lock
		lock.Lease, lock.NoRenew, lock.Wait = 300*time.Millisecond, true, runtime.NoWait
		h, err := old.Acquire(ctx, lock)
		if err != nil {
			t.Fatalf("%v on the old master: %v", k.lock.Kind, err)
		}
		stale[i], _ = runtime.Fence(h.Context())
		if stale[i] <= ahead {
			t.Fatalf("%v: fence %d not above the planted %d", k.lock.Kind, stale[i], ahead)
		}
		// The holder stalls: its lease ends, it never releases.
		<-h.Context().Done()
		waitLeaseEnded(ctx, t, master, key)
	}
	if n, err := master.Do(ctx, "WAIT", 1, 5000).Int64(); err != nil || n != 1 {
		t.Fatalf("WAIT for the replica: %v, %v", n, err)
	}
	if err := replica.Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	promoted := runtime.New(replica, runtime.WithKeyPrefix(prefix))
	defer promoted.Close()
	for i, k := range kinds {
		lock := k.lock
		lock.Wait = runtime.NoWait
		h, err := promoted.Acquire(ctx, lock)
		if err != nil {
			t.Fatalf("%v on the promoted replica: %v", k.lock.Kind, err)
		}
		fresh, _ := runtime.Fence(h.Context())
		store := &fencedStore{}
		if err := store.write(fresh, "new holder"); err != nil {
			t.Errorf("%v: the new holder's write: %v", k.lock.Kind, err)
		}
		err = store.write(stale[i], "stale holder")
		if !errors.Is(err, errStaleFence) {
			t.Errorf("%v: the stale holder's fence %d (lease ended before the failover) was accepted after the new holder's %d",
				k.lock.Kind, stale[i], fresh)
		}
		if err := h.Release(); err != nil {
			t.Errorf("%v release: %v", k.lock.Kind, err)
		}
	}
}

// plantTombstone leaves in key the last fence of a lock released at fence,
// as the scripts do.
func plantTombstone(ctx context.Context, t *testing.T, rdb *redis.Client, key string, fence int64, hash bool) {
	t.Helper()
	ttl := time.Minute
	var err error
	if hash {
		err = rdb.HSet(ctx, key, "f", strconv.FormatInt(fence, 10)).Err()
		if err == nil {
			err = rdb.PExpire(ctx, key, ttl).Err()
		}
	} else {
		err = rdb.Set(ctx, key, "! "+strconv.FormatInt(fence, 10)+" -", ttl).Err()
	}
	if err != nil {
		t.Fatal(err)
	}
}

// waitLeaseEnded waits until Redis, too, sees the lease of the lock in key
// over: an exclusive lock's key outlives its lease by the fence floor, a
// shared lock's holders' deadlines are in its set.
func waitLeaseEnded(ctx context.Context, t *testing.T, rdb *redis.Client, key string) {
	t.Helper()
	for {
		typ, err := rdb.Type(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		if typ == "hash" {
			exp, _ := rdb.HGet(ctx, key, "exp").Int64()
			if exp < time.Now().UnixMilli()-50 {
				return
			}
		} else if pttl, _ := rdb.PTTL(ctx, key).Result(); pttl < lua.FenceFloor-50*time.Millisecond {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: lease not over in Redis", key)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// beyondFloor returns the keys that hold more than a lock's last fence: a
// released lock keeps a tombstone ("! <fence> 0", or a hash with only f)
// for lua.FenceFloor.
func beyondFloor(ctx context.Context, t *testing.T, rdb *redis.Client, keys []string) []string {
	t.Helper()
	var out []string
	for _, k := range keys {
		if v, err := rdb.Get(ctx, k).Result(); err == nil && strings.HasPrefix(v, "! ") {
			continue
		}
		if f, err := rdb.HKeys(ctx, k).Result(); err == nil && len(f) == 1 && f[0] == "f" {
			continue
		}
		out = append(out, k)
	}
	return out
}
