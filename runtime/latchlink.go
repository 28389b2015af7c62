package runtime

import (
	"context"
	"errors"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/internal/runtimelink"
)

// Package latch (a CountDownLatch: a few script calls and a wake channel)
// builds on a Locker but lives outside runtime, so that runtime stays the
// locks. What it needs of a Locker's internals it gets through this hook
// (internal/runtimelink), not through public methods on Locker.
func init() {
	runtimelink.Latch = func(l any) runtimelink.LatchLink { return l.(*Locker).latchLink() }
}

func (l *Locker) latchLink() runtimelink.LatchLink {
	return runtimelink.LatchLink{
		Prefix:     l.prefix,
		Publish:    l.publish,
		Closed:     l.closed,
		MaxTTL:     maxLease,
		NextHolder: l.nextHolder,
		CheckKey:   validateKey,
		CheckParty: checkHolderID,
		Eval:       l.evalForLatch,
		Join:       l.joinAwaiter,
	}
}

// evalForLatch runs one latch script, bounded by ctx even if the client is
// not (evalBounded); one nobody waits for ends within the release timeout.
func (l *Locker) evalForLatch(ctx context.Context, c backend.Call) (any, error) {
	if l.isClosed() {
		return nil, ErrClosed
	}
	reply, _, _, err := l.evalBounded(ctx, callBounds{now: time.Now(), orphan: l.releaseTimeout}, c, false)
	if errors.Is(err, errNoReply) {
		err = errors.Join(err, context.Cause(ctx))
	}
	return reply, err
}

// joinAwaiter registers an awaiter (not in line, so that every awaiter of
// the channel wakes on one message) on a wake channel.
func (l *Locker) joinAwaiter(channel string) runtimelink.Awaiter {
	m := l.wakeups
	w := m.Join(channel, l.nextHolder(), false, true)
	return runtimelink.Awaiter{
		Wake:       w.Wake(),
		Subscribed: func() bool { return m.Subscribed(w) },
		Subscribe:  func(ctx context.Context) bool { return m.Subscribe(ctx, w) },
		Leave:      func() { m.Leave(w, false) },
	}
}
