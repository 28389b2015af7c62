// Package holderid makes and checks holder ids, the names a holder has in
// Redis. A person reading Inspect, `lockgen locks` or a busy error must be
// able to find the holder's process from its id, and the scripts accept
// only 1 to 64 bytes of [A-Za-z0-9._:-] (':' separates the id's parts in
// the scripts' values).
//
// The default ids (Default) are "<host>:<pid>:<random>:<n>", e.g.
// "web-3.eu:4711:3f9a1c07d2e4:1k": the host name (bytes outside the
// alphabet become '_', cut to MaxHostPart bytes), the process id, a random
// part drawn once per source (two Lockers of one process, or a pid reused
// after a restart, never share ids) and a counter in base 36. At most
// 24+1+10+1+12+1+13 = 62 bytes, so every default id passes Check.
//
// It exists apart from package runtime, which wires a source into a
// Locker (WithHolderIDs or Default) and turns Check's error into its
// sentinel, so that the id format is defined and tested on its own.
package holderid

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
)

// MaxHostPart bounds the host name in a default holder id, so that the id
// stays within the 64 bytes the scripts accept.
const MaxHostPart = 24

// MaxLen is the longest holder id the scripts accept.
const MaxLen = 64

// Default returns a source of default ids for this host and process.
func Default() func() string {
	host, _ := os.Hostname() // an error leaves it empty: "unknown"
	return New(host, os.Getpid())
}

// New returns a source of ids "<HostPart(host)>:<pid>:<random>:<n>"; it
// is safe for concurrent use.
func New(host string, pid int) func() string {
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	prefix := HostPart(host) + ":" + strconv.Itoa(pid) + ":" + hex.EncodeToString(b[:]) + ":"
	var n atomic.Uint64
	return func() string {
		// Built in a stack buffer: one allocation per id, the string.
		var buf [MaxLen]byte
		return string(strconv.AppendUint(append(buf[:0], prefix...), n.Add(1), 36))
	}
}

// HostPart turns a host name into the host part of a holder id: ':' (the
// id's separator) and every byte outside [A-Za-z0-9._-] become '_', and it
// is cut to MaxHostPart bytes; "" becomes "unknown".
func HostPart(host string) string {
	if host == "" {
		return "unknown"
	}
	b := []byte(host[:min(len(host), MaxHostPart)])
	for i, c := range b {
		if !inPart(c) {
			b[i] = '_'
		}
	}
	return string(b)
}

// Check reports whether id is in the scripts' holder id alphabet and
// length, so that a bad source fails with a clear error before Redis sees
// it.
func Check(id string) error {
	if len(id) < 1 || len(id) > MaxLen {
		return fmt.Errorf("holder id %q: want 1 to %d bytes", id, MaxLen)
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !inPart(c) && c != ':' {
			return fmt.Errorf("holder id %q: byte %q at %d not in [A-Za-z0-9._:-]", id, c, i)
		}
	}
	return nil
}

// inPart reports whether c may stand in a part of an id: [A-Za-z0-9._-].
func inPart(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '_' || c == '.'
}
