package goredis

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/lockgen/lockgen/internal/callerr"
	"github.com/redis/go-redis/v9"
)

// On a Cluster, a call follows its slot: when the node it went to no
// longer serves the slot (MOVED, ASK, a node demoted to replica), cannot
// serve it now (CLUSTERDOWN, TRYAGAIN, LOADING), or cannot be reached (a
// master killed, not yet replaced), the backend reloads the slot map at
// once and sends the call again, with a short pause that doubles, until
// the call gets an answer, its context ends or followLimit has passed.
// go-redis itself follows a MOVED a few times, but reloads the map only in
// the background and never on a dial error: after a master dies, it sends
// to the dead address until its periodic reload, a minute later.
//
// Sending a call again is safe: every script is idempotent (an acquire
// that finds the lock held by its caller's holder id only restarts the
// lease; a release that finds it not held changes nothing), so a call whose
// first attempt ran after all does no harm when it runs again.

// followLimit bounds how long a call follows its slot when its context
// allows longer: the failure detection and election of a Cluster with the
// default node timeout (15 s) take about that long.
const followLimit = 20 * time.Second

// lostRoute reports whether err says that the call did not reach the
// slot's master, or reached a node that does not serve it now, so that
// it is worth sending again after a reload of the slot map.
func lostRoute(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	// A dial that timed out wraps DeadlineExceeded too; it is a node that
	// cannot be reached, not the caller's deadline.
	if callerr.NotSent(err) {
		return true
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	// UNBLOCKED: a WAIT cut short because its node became a replica.
	for _, prefix := range []string{"MOVED", "ASK", "TRYAGAIN", "CLUSTERDOWN", "LOADING", "READONLY", "MASTERDOWN", "UNBLOCKED"} {
		if redis.HasErrorPrefix(err, prefix) {
			return true
		}
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, redis.ErrClosed)
}

// isMoved reports whether err is a redirection, which needs no pause
// before the call is sent again to the node it names.
func isMoved(err error) bool {
	_, moved := redis.IsMovedError(err)
	return moved
}

// follow runs attempt until it returns an error that is not lostRoute, on
// a Cluster; elsewhere it runs it once. Between two attempts it reloads the
// slot map.
func (b *goRedisBackend) follow(ctx context.Context, attempt func(context.Context) error) error {
	err := attempt(ctx)
	if b.cluster == nil {
		return err
	}
	giveUp := time.Now().Add(followLimit)
	pause := slotRetryPauseMin
	for n := 0; lostRoute(err); n++ {
		if !b.followPause(ctx, giveUp, err, n, &pause) {
			return err
		}
		routeErr := err
		if err = attempt(ctx); ctx.Err() != nil && err != nil && !lostRoute(err) {
			// Say why the call did not get through, not only that it
			// ran out of time.
			return fmt.Errorf("%w; the slot's master was not reached: %w", err, routeErr)
		}
	}
	return err
}

// followPause reloads the slot map after the n-th failed attempt, whose
// error was err, and pauses before the next (not after a first MOVED).
// It reports false when ctx or giveUp leaves no time for another attempt.
func (b *goRedisBackend) followPause(ctx context.Context, giveUp time.Time, err error, n int, pause *time.Duration) bool {
	if ctx.Err() != nil || time.Now().After(giveUp) {
		return false
	}
	if rerr := b.reloadSlots(ctx); rerr != nil {
		b.slotsStale.Store(true)
	}
	if n == 0 && isMoved(err) {
		return true
	}
	select {
	case <-ctx.Done():
		return false
	case <-time.After(*pause):
	}
	*pause = min(2**pause, slotRetryPauseMax)
	return true
}
