package runtime

import (
	"context"
	"fmt"
	"time"

	"github.com/lockgen/lockgen/internal/runtimelink"
)

// Option configures a Locker.
type Option func(*Locker)

// WithKeyPrefix sets the prefix of every Redis key and channel the Locker
// uses (default "lockgen:"). Lockers that must exclude each other need the
// same prefix.
func WithKeyPrefix(prefix string) Option { return func(l *Locker) { l.prefix = prefix } }

// WithDefaultLease sets the lease of locks whose Lock.Lease is 0 (default
// 30s).
func WithDefaultLease(d time.Duration) Option { return func(l *Locker) { l.lease = d } }

// WithObserver adds an Observer; every one added (with WithObserver or
// WithContextObserver) is called, in order.
func WithObserver(o Observer) Option {
	return func(l *Locker) {
		l.observers = append(l.observers, func(_ context.Context, e Event) { o(e) })
	}
}

// WithContextObserver adds a ContextObserver, for observers that need the
// caller's context (a tracer: package github.com/lockgen/lockgen/otel);
// every observer added is called, in order.
func WithContextObserver(o ContextObserver) Option {
	return func(l *Locker) { l.observers = append(l.observers, o) }
}

// WithReplicas turns on replica safety: after each acquire the Locker sends
// WAIT n timeout on the same connection, and if fewer than n replicas
// acknowledge it gives the lock back and fails with ErrNotReplicated. Keep
// timeout below the client's read timeout. A backend without replicas (the
// embedded one) never acknowledges, so every Acquire fails there.
//
// Measured on Sentinel (docs/failover.md): n = 1 keeps the grants a crash
// during a replication lag would lose from being granted at all; only n =
// every replica keeps a graceful failover from losing the grants made
// while the clients still write to the old master, at the cost of no
// grants while a replica is missing.
func WithReplicas(n int, timeout time.Duration) Option {
	return func(l *Locker) { l.replicas, l.replicaTimeout = n, timeout }
}

// WithHolderIDs replaces the source of holder ids (default:
// "<host>:<pid>:<random>:<n>", so that a holder seen in Inspect or a busy
// error can be traced to its process). Each call must return a new id of 1 to
// 64 bytes of [A-Za-z0-9._:-], unique among all clients of the Redis server;
// tests use it to get predictable ids.
func WithHolderIDs(next func() string) Option { return func(l *Locker) { l.nextHolder = next } }

// WithReleaseTimeout bounds each release call (default 5s; releases share
// deadlines, so one may be given up after 7/8 of it; over a go-redis
// client without ContextTimeoutEnabled, a release already sent ends within
// the client's own timeouts instead, since the client reads past the
// deadline). Releases run on a
// context that is not cancelled, so that a lock is given back even when
// the caller's context is done; one that fails is retried in the background
// (EventCleanedUp), and Close waits this long for such clean-ups.
func WithReleaseTimeout(d time.Duration) Option { return func(l *Locker) { l.releaseTimeout = d } }

// WithWaiterWindow is kept so that code written for lockgen's protocol 1
// still compiles; it changes nothing a caller can observe.
//
// Deprecated: mutex waiters no longer renew a registration every window/3.
// A waiter is registered once and sleeps until a release offers it the lock
// or the holder's lease would end; a waiter that died holds the next one up
// for one offer (500ms), whatever the window.
func WithWaiterWindow(d time.Duration) Option { return func(l *Locker) { l.waiterWindow = d } }

// WithUnreachableTimeout bounds how long an Acquire keeps trying a Redis
// that fails every call (default 15s): a refused or reset connection, a
// call that times out in the client, a failover's READONLY or CLUSTERDOWN,
// a quorum without a majority. The bound counts from the first failure
// after the latest reply (a busy reply starts it anew), so that a lock that
// is merely busy is still waited for until ctx is done or the Lock's Wait
// ends. Once it has passed, Acquire fails with an error that wraps the last
// failure (errors.Is finds the dial error, quorum.ErrNoQuorum, ...). The first
// failed call itself is bounded by the client's own timeouts and retries
// only (1.7 s for go-redis's defaults and a refused dial), so a short
// timeout may be overrun by that much; the calls after it end at the
// timeout. The default
// rides out a Sentinel or Cluster failover (2-3 s in this repository's
// failover tests); raise it if yours take longer (Sentinel's
// down-after-milliseconds plus the election).
func WithUnreachableTimeout(d time.Duration) Option {
	return func(l *Locker) { l.unreachableTimeout = d }
}

// quorumRefusal is the error of an option that a Locker over a quorum
// (Caps.Quorum) refuses; package quorum's constructors return it at once
// (internal/runtimelink).
func (l *Locker) quorumRefusal() error {
	if l.caps.Quorum && l.replicas > 0 {
		return fmt.Errorf("%w: WithReplicas is not supported on a quorum Locker: the majority of independent servers is its replication", ErrInvalidLock)
	}
	return nil
}

func init() {
	runtimelink.QuorumRefusal = func(l any) error { return l.(*Locker).quorumRefusal() }
}

func (l *Locker) checkOptions() error {
	if l.guardErr != nil {
		return l.guardErr
	}
	if l.lease < time.Millisecond || l.lease > maxLease {
		return fmt.Errorf("%w: default lease %v outside 1ms..%v", ErrInvalidLock, l.lease, maxLease)
	}
	if err := l.quorumRefusal(); err != nil {
		return err
	}
	if l.replicas < 0 || (l.replicas > 0 && l.replicaTimeout <= 0) {
		return fmt.Errorf("%w: WithReplicas(%d, %v): want n >= 0 and a positive timeout", ErrInvalidLock, l.replicas, l.replicaTimeout)
	}
	if l.waiterWindow < 3*time.Millisecond || l.waiterWindow > maxLease {
		return fmt.Errorf("%w: waiter window %v outside 3ms..%v", ErrInvalidLock, l.waiterWindow, maxLease)
	}
	if l.unreachableTimeout <= 0 {
		return fmt.Errorf("%w: unreachable timeout %v, want > 0", ErrInvalidLock, l.unreachableTimeout)
	}
	if l.releaseTimeout <= 0 {
		return fmt.Errorf("%w: release timeout %v, want > 0", ErrInvalidLock, l.releaseTimeout)
	}
	return nil
}
