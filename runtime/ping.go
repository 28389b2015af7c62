package runtime

import (
	"context"
	"fmt"
)

// Ping checks that the Locker can work now, for health checks: Redis
// answers on the connection scripts run on, and on the Pub/Sub connection
// that wakes waiters (go-redis: a PING on each in use, every master on a
// Cluster, and on a single server or Sentinel the Pub/Sub connection is
// opened if no waiter has opened it yet). A backend whose Caps have no Ping
// runs a read-only script instead. It returns ErrClosed after Close, else
// the first failure, bounded by ctx.
func (l *Locker) Ping(ctx context.Context) error {
	if l.isClosed() {
		return ErrClosed
	}
	if l.caps.Ping != nil {
		return l.caps.Ping(ctx)
	}
	spec, err := l.resolve(Lock{Kind: Mutex, Key: "ping", Lease: l.lease}, nil)
	if err != nil {
		return err
	}
	if _, err := l.backend.Eval(ctx, spec.call(spec.Kind.scripts().inspect, opsHolder, l.publish)); err != nil {
		return fmt.Errorf("lockgen: ping: %w", err)
	}
	return nil
}
