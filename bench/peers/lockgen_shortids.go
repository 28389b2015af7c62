//go:build !nolockgen

package peers

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"strconv"
	"sync/atomic"

	"github.com/lockgen/lockgen/runtime"
)

// lockgenShortIDsPeer is lockgen's mutex with the short holder ids a
// deployment that counts Redis bytes would set through WithHolderIDs: a
// random part drawn once per Locker and a counter, both in base 36
// ("k3x9q2m1.1k", about 11 bytes), where the default id also names the
// host and the process (up to 62 bytes). Only the memory workload measures
// it: the id changes what is stored, not what runs.
func lockgenShortIDsPeer() Peer {
	return Peer{
		Library: "lockgen", Setting: "mutex-shortids",
		Notes:     "runtime.New with WithHolderIDs: ids of a random part drawn once and a counter, base 36 (about 11 bytes); Kind Mutex",
		AutoRenew: true,
		open: func(cfg Config) (Client, error) {
			rdb, cc := newGoRedisClient(cfg.Addr)
			return &lockgenClient{
				locker: runtime.New(rdb, runtime.WithHolderIDs(shortHolderIDs())), kind: runtime.Mutex, cfg: cfg,
				incr:   func(ctx context.Context, key string) error { return rdb.Incr(ctx, key).Err() },
				counts: cc.counts,
				close:  rdb.Close,
			}, nil
		},
	}
}

// shortHolderIDs: 41 random bits (8 base-36 digits at most) tell two
// Lockers apart, a counter tells the holders of one apart.
func shortHolderIDs() func() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	prefix := strconv.FormatUint(binary.LittleEndian.Uint64(b[:])>>23, 36) + "."
	var n atomic.Uint64
	return func() string { return prefix + strconv.FormatUint(n.Add(1), 36) }
}
