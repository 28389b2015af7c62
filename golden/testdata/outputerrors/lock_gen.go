package outputerrors

import (
	"context"
	"github.com/lockgen/lockgen/runtime"
)

// SvcLocked wraps *Svc: annotated methods run under their locks, the others delegate.
type SvcLocked struct {
	inner  *Svc
	locker *runtime.Locker
}

// NewSvcLocked wraps inner; its annotated methods take their locks with l.
func NewSvcLocked(inner *Svc, l *runtime.Locker) *SvcLocked {
	return &SvcLocked{
		inner:  inner,
		locker: l,
	}
}

func (w *SvcLocked) Pay(ctx context.Context, id string) (err error) {
	held, err := w.locker.Acquire(ctx, runtime.Lock{Kind: runtime.Mutex, Key: "order:" + runtime.EscapeKeyPart(id)})
	if err != nil {
		return err
	}
	defer held.ReleaseInto(&err)
	return w.inner.Pay(held.Context(), id)
}

func (w *SvcLocked) Refund(ctx context.Context, id string) (err error) {
	held, err := w.locker.Acquire(ctx, runtime.Lock{Kind: runtime.Mutex, Key: "order:" + runtime.EscapeKeyPart(id) + ":refund"})
	if err != nil {
		return err
	}
	defer held.ReleaseInto(&err)
	return w.inner.Refund(held.Context(), id)
}

func (w *SvcLocked) Gone() { w.inner.Gone() }
