// Package callerr tells what the error of one Redis call says, for the
// runtime and its go-redis backend alike (they must agree): whether a
// later attempt may succeed (IsTransient), whether the call never left the
// client (NotSent), whether Redis's ACL denied a command, and which one
// (NamePermissionError, applied to every call by WithPermissionErrors),
// and the sentinels both return.
package callerr

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
)

// During a failover, a restart or a slot migration, Redis calls fail for a
// while in ways that a later attempt does not: the connection to the old
// master is refused or reset, a demoted master answers READONLY, a replica
// being promoted answers LOADING or MASTERDOWN, a master whose replicas are
// being reconfigured answers NOREPLICAS (min-replicas-to-write), and a
// Cluster answers TRYAGAIN, CLUSTERDOWN, or a MOVED/ASK that the client did
// not follow. A waiter whose wait has time left tries again after such an
// error rather than fail (runtime/acquire_recover.go); anything else (a script
// error, NOPERM, a wrong type, a closed client) ends the wait at once.

// ErrNoReply says that a call's reply did not arrive before the caller's
// context or wait ended: its outcome is unknown.
var ErrNoReply = errors.New("no reply before the wait ended")

// ErrNeverSent is the error of the pending of a call taken out of a queue
// before it was sent: it certainly did not run.
var ErrNeverSent = errors.New("never sent")

// ErrClosed is runtime.ErrClosed: the Locker, or the backend it closed,
// was closed.
var ErrClosed = errors.New("lockgen: locker closed")

// transientReplyPrefixes are the error replies of Redis that say "not now"
// rather than "no".
var transientReplyPrefixes = []string{
	"READONLY", "LOADING", "MASTERDOWN", "NOREPLICAS",
	"TRYAGAIN", "CLUSTERDOWN", "MOVED", "ASK",
}

// transientErrnos are the connection errors of a server that is going away
// or not there yet.
var transientErrnos = []syscall.Errno{
	syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.ECONNABORTED, syscall.EPIPE,
}

// IsTransient reports whether err, the error of one call, may not recur on
// the next attempt (see above). ErrNoReply is not: it says the caller's
// wait or context ended, not that Redis is changing; nor is a context's
// error (it satisfies net.Error's Timeout as well).
func IsTransient(err error) bool {
	if err == nil || errors.Is(err, ErrNoReply) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return false
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	for _, errno := range transientErrnos {
		if errors.Is(err, errno) {
			return true
		}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true // one call timed out (the client's read or dial timeout)
	}
	return hasTransientReply(err)
}

// hasTransientReply reports whether err, or an error it wraps, is a Redis
// error reply with one of transientReplyPrefixes as its first word.
func hasTransientReply(err error) bool {
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		if inner := u.Unwrap(); inner != nil && hasTransientReply(inner) {
			return true
		}
	case interface{ Unwrap() []error }:
		for _, inner := range u.Unwrap() {
			if hasTransientReply(inner) {
				return true
			}
		}
	}
	word, _, _ := strings.Cut(err.Error(), " ")
	for _, p := range transientReplyPrefixes {
		if word == p {
			return true
		}
	}
	return false
}

// NotSent reports whether err says the call never left the client: its
// connection could not be dialled (a dial that timed out included).
func NotSent(err error) bool {
	if err == nil {
		return false // the common case, without errors.As's allocation of op
	}
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}
