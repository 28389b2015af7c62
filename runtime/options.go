package runtime

import (
	"fmt"
	"time"
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

// WithObserver adds an Observer; every one added is called, in order.
func WithObserver(o Observer) Option {
	return func(l *Locker) { l.observers = append(l.observers, o) }
}

// WithReplicas turns on replica safety: after each acquire the Locker sends
// WAIT n timeout on the same connection, and if fewer than n replicas
// acknowledge it gives the lock back and fails with ErrNotReplicated. Keep
// timeout below the client's read timeout. A backend without replicas (the
// embedded one) never acknowledges, so every Acquire fails there.
func WithReplicas(n int, timeout time.Duration) Option {
	return func(l *Locker) { l.replicas, l.replicaTimeout = n, timeout }
}

// WithHolderIDs replaces the source of holder ids (default: a random
// per-Locker prefix and a counter). Each call must return a new id of 1 to
// 64 bytes of [A-Za-z0-9._:-], unique among all clients of the Redis server;
// tests use it to get predictable ids.
func WithHolderIDs(next func() string) Option { return func(l *Locker) { l.nextHolder = next } }

// WithReleaseTimeout bounds each release and fair-queue leave (default 5s).
// They run on a context that is not cancelled, so that a lock is given back
// even when the caller's context is done.
func WithReleaseTimeout(d time.Duration) Option { return func(l *Locker) { l.releaseTimeout = d } }

func (l *Locker) checkOptions() error {
	if l.lease < time.Millisecond || l.lease > maxLease {
		return fmt.Errorf("%w: default lease %v outside 1ms..%v", ErrInvalidLock, l.lease, maxLease)
	}
	if l.replicas < 0 || (l.replicas > 0 && l.replicaTimeout <= 0) {
		return fmt.Errorf("%w: WithReplicas(%d, %v): want n >= 0 and a positive timeout", ErrInvalidLock, l.replicas, l.replicaTimeout)
	}
	if l.releaseTimeout <= 0 {
		return fmt.Errorf("%w: release timeout %v, want > 0", ErrInvalidLock, l.releaseTimeout)
	}
	return nil
}
