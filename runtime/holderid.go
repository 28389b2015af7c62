package runtime

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
)

// Holder ids name a holder in Redis, and a person reading Inspect, `lockgen
// locks` or a busy error must be able to find its process. The default ids
// are "<host>:<pid>:<random>:<n>", e.g. "web-3.eu:4711:3f9a1c07d2e4:1k":
// the host name (bytes outside the holder alphabet become '_', cut to
// maxHostPart bytes), the process id, a random part drawn once per Locker
// (two Lockers of one process, or a pid reused after a restart, never share
// ids) and a counter. At most 24+1+10+1+12+1+13 = 62 bytes.
func defaultHolderIDs() func() string {
	host, _ := os.Hostname() // an error leaves it empty: "unknown"
	return holderIDs(host, os.Getpid())
}

// maxHostPart bounds the host name in a default holder id, so that the id
// stays within the 64 bytes the scripts accept.
const maxHostPart = 24

func holderIDs(host string, pid int) func() string {
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	prefix := hostPart(host) + ":" + strconv.Itoa(pid) + ":" + hex.EncodeToString(b[:]) + ":"
	var n atomic.Uint64
	return func() string {
		// Built in a stack buffer: one allocation per id, the string.
		var buf [64]byte
		return string(strconv.AppendUint(append(buf[:0], prefix...), n.Add(1), 36))
	}
}

// hostPart turns a host name into the host part of a holder id: ':' (the
// id's separator) and every byte outside [A-Za-z0-9._-] become '_', and it
// is cut to maxHostPart bytes.
func hostPart(host string) string {
	if host == "" {
		return "unknown"
	}
	b := []byte(host[:min(len(host), maxHostPart)])
	for i, c := range b {
		if !unreserved(c) || c == '~' {
			b[i] = '_'
		}
	}
	return string(b)
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
