// Package runtimelink lets lockgen's own packages that build on package
// runtime (the quorum, the latch) learn what a Locker keeps unexported,
// without adding to runtime's public API. Package runtime fills the variables in when it
// is initialised; runtime cannot import those packages, and they cannot
// read its fields.
package runtimelink

import (
	"context"
	"time"

	"github.com/lockgen/lockgen/backend"
)

// QuorumRefusal returns the error of an option a quorum Locker refuses
// (WithReplicas: the majority of independent servers is its replication),
// or nil. locker is a *runtime.Locker.
var QuorumRefusal func(locker any) error

// Latch returns what package latch needs of a Locker: locker is a
// *runtime.Locker. A latch is a few script calls and a wake channel; this
// hands it exactly those, so that Locker exports nothing for it.
var Latch func(locker any) LatchLink

// LatchLink is the part of a Locker, and of runtime's rules, that a latch
// uses.
type LatchLink struct {
	Prefix  string          // the Locker's key prefix (WithKeyPrefix)
	Publish string          // the publish command its scripts take (PUBLISH or SPUBLISH)
	Closed  <-chan struct{} // closed when the Locker closes
	MaxTTL  time.Duration   // the longest TTL a script accepts (a lease's bound)

	// NextHolder draws a fresh caller id, as a lock holder's.
	NextHolder func() string
	// CheckKey and CheckParty return runtime's errors for a bad rendered
	// key (ErrInvalidKey) or caller-named id.
	CheckKey, CheckParty func(string) error
	// Eval runs one script call bounded by ctx even if the client is not;
	// a call nobody waits for any more ends within the Locker's release
	// timeout. After Close it returns runtime.ErrClosed without a call.
	Eval func(ctx context.Context, c backend.Call) (any, error)
	// Join registers an awaiter on a wake channel of the Locker's wake-ups
	// (not in line: every awaiter of the channel is woken by a message).
	Join func(channel string) Awaiter
}

// Awaiter is one registration on a wake channel.
type Awaiter struct {
	Wake       <-chan struct{}                // receives when a message (or a reconnection) may have opened it
	Subscribed func() bool                    // a live subscription: no message from now on is missed
	Subscribe  func(ctx context.Context) bool // subscribes, bounded by ctx
	Leave      func()                         // unregisters; call once
}
