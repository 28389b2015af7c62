package runtime_test

import (
	"errors"
	"testing"
	"time"

	"github.com/lockgen/lockgen/redistest"
	"github.com/lockgen/lockgen/runtime"
)

// On a master without replicas, a mutex handed over to a waiter that asked
// for replica safety is claimed with a WAIT that nobody acknowledges: that
// waiter fails with ErrNotReplicated and gives the lock back, and a waiter
// that did not ask for replicas gets it (a hand-over is claimed without WAIT
// when replica safety is off).
func TestHandOverUnderReplicaSafetyWithoutReplicas(t *testing.T) {
	srv := redistest.Start(t)
	prefix := uniquePrefix(t)
	ctx := ctxTimeout(t, time.Minute)
	lock := runtime.Lock{Kind: runtime.Mutex, Key: "m", Wait: 20 * time.Second}
	holder := runtime.New(srv.Client(t), runtime.WithKeyPrefix(prefix))
	defer holder.Close()
	h, err := holder.Acquire(ctx, lock)
	if err != nil {
		t.Fatal(err)
	}
	type outcome struct {
		err error
	}
	start := func(opts ...runtime.Option) <-chan outcome {
		log := newEventLog()
		l := runtime.New(srv.Client(t), append([]runtime.Option{runtime.WithKeyPrefix(prefix), runtime.WithObserver(log.observe)}, opts...)...)
		t.Cleanup(func() { l.Close() })
		ch := make(chan outcome, 1)
		go func() {
			held, err := l.Acquire(ctx, lock)
			if err == nil {
				err = held.Release()
			}
			ch <- outcome{err}
		}()
		select {
		case <-log.busy:
		case <-ctx.Done():
			t.Fatal("the waiter never found the lock busy")
		}
		return ch
	}
	safe := start(runtime.WithReplicas(1, 100*time.Millisecond))
	plain := start()
	if err := h.Release(); err != nil {
		t.Fatal(err)
	}
	if o := <-safe; !errors.Is(o.err, runtime.ErrNotReplicated) {
		t.Errorf("waiter with WithReplicas(1) on a master without replicas: %v; want ErrNotReplicated", o.err)
	}
	if o := <-plain; o.err != nil {
		t.Errorf("waiter without replica safety: %v; want the lock", o.err)
	}
	again := lock
	again.Wait = 5 * time.Second
	if h, err := holder.Acquire(ctx, again); err != nil {
		t.Errorf("the lock was left taken after both waiters: %v", err)
	} else {
		h.Release()
	}
}
