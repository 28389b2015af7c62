package runtime

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"sync/atomic"
)

// Holder ids name a holder in Redis. The default ids are a random prefix
// drawn once per Locker and a counter, e.g. "3f9a1c07d2e4b861:1k": unique
// across processes without coordination, and cheap to make.
func defaultHolderIDs() func() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	prefix := hex.EncodeToString(b[:]) + ":"
	var n atomic.Uint64
	return func() string {
		// Built in a stack buffer: one allocation per id, the string.
		var buf [64]byte
		return string(strconv.AppendUint(append(buf[:0], prefix...), n.Add(1), 36))
	}
}

// checkHolderID enforces the script protocol's holder id alphabet, so that a
// bad WithHolderIDs source fails with a clear error before Redis sees it.
func checkHolderID(id string) error {
	if len(id) < 1 || len(id) > 64 {
		return fmt.Errorf("%w: holder id %q: want 1 to 64 bytes", ErrInvalidLock, id)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !unreserved(c) && c != ':' || c == '~' {
			return fmt.Errorf("%w: holder id %q: byte %q at %d not in [A-Za-z0-9._:-]", ErrInvalidLock, id, c, i)
		}
	}
	return nil
}
