package callerr

import (
	"context"
	"time"

	"github.com/lockgen/lockgen/backend"
)

// WithPermissionErrors returns b naming NOPERM errors (ErrNoPermission,
// NamePermissionError) on the way out of every call, so that each part of
// the Locker over it can tell a denial from a transient failure. Caps and
// the rest pass through.
func WithPermissionErrors(b backend.Backend) backend.Backend { return &permBackend{Backend: b} }

type permBackend struct {
	backend.Backend
}

func (b *permBackend) Eval(ctx context.Context, c backend.Call) (any, error) {
	v, err := b.Backend.Eval(ctx, c)
	return v, NamePermissionError(err, c.Script)
}

func (b *permBackend) EvalBatch(ctx context.Context, calls []backend.Call) []backend.Reply {
	replies := b.Backend.EvalBatch(ctx, calls)
	for i := range replies {
		replies[i].Err = NamePermissionError(replies[i].Err, calls[i].Script)
	}
	return replies
}

func (b *permBackend) EvalWait(ctx context.Context, c backend.Call, replicas int, timeout time.Duration) (any, int, error) {
	v, acked, err := b.Backend.EvalWait(ctx, c, replicas, timeout)
	return v, acked, NamePermissionError(err, c.Script)
}

func (b *permBackend) Subscribe(ctx context.Context, channel string, deliver func(string)) (func(), error) {
	unsub, err := b.Backend.Subscribe(ctx, channel, deliver)
	return unsub, NamePermissionError(err, nil)
}
