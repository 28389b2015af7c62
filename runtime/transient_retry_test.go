package runtime_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/lockgen/lockgen/redistest"
	"github.com/lockgen/lockgen/runtime"
	"github.com/redis/go-redis/v9"
)

// retrySignal is an Observer that closes retried at the first EventRetried
// and records the holder ids that retried and that got the lock.
type retrySignal struct {
	once    sync.Once
	retried chan struct{}
	last    error

	mu              sync.Mutex
	retriedHolders  map[string]bool
	acquiredHolders []string
}

func (r *retrySignal) observe(ev runtime.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch ev.Kind {
	case runtime.EventRetried:
		if r.retriedHolders == nil {
			r.retriedHolders = map[string]bool{}
		}
		r.retriedHolders[ev.Holder] = true
		r.once.Do(func() { r.last = ev.Err; close(r.retried) })
	case runtime.EventAcquired:
		r.acquiredHolders = append(r.acquiredHolders, ev.Holder)
	}
}

// sameHolder reports whether a holder id that retried got the lock: the
// retry must go on under a new one (a release of the old one may still be
// on its way).
func (r *retrySignal) sameHolder() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, h := range r.acquiredHolders {
		if r.retriedHolders[h] {
			return true
		}
	}
	return false
}

// A waiter of every kind whose server goes away (connection refused) and
// comes back, empty, within its wait retries instead of failing, and gets
// the lock; a try-once caller fails at once meanwhile; a waiter whose wait
// ends before the server is back fails with the transient error, on time.
// The waiters start once the server is down, so that each one's first
// attempt meets the refused connection. (One that had gone to sleep on a
// busy reply before would learn nothing until the server came back and
// its subscription's reconnection woke it: the test would wait for a
// retry that need not come.)
func TestWaiterRetriesWhileTheServerRestarts(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	prefix := uniquePrefix(t)
	holder := runtime.New(srv.Client(t), runtime.WithKeyPrefix(prefix))
	defer holder.Close()
	locks := []runtime.Lock{
		{Kind: runtime.Mutex, Key: "m"},
		{Kind: runtime.Fair, Key: "f"},
		{Kind: runtime.Write, Key: "rw"},
		{Kind: runtime.Semaphore, Key: "s", Permits: 1},
	}
	ctx := ctxTimeout(t, time.Minute)
	if _, err := holder.Acquire(ctx, locks...); err != nil {
		t.Fatal(err)
	}
	type waiting struct {
		lock   runtime.Lock
		signal *retrySignal
		done   chan error
	}
	srv.Kill()
	var ws []waiting
	for _, lk := range append(locks, runtime.Lock{Kind: runtime.Read, Key: "rw"}) {
		sig := &retrySignal{retried: make(chan struct{})}
		l := runtime.New(redis.NewClient(srv.Options()), runtime.WithKeyPrefix(prefix), runtime.WithObserver(sig.observe))
		defer l.Close()
		lk.Wait = 30 * time.Second
		w := waiting{lk, sig, make(chan error, 1)}
		go func() {
			h, err := l.Acquire(ctx, w.lock)
			if err == nil {
				err = h.Release()
			}
			w.done <- err
		}()
		ws = append(ws, w)
	}
	for _, w := range ws {
		select {
		case <-w.signal.retried:
			t.Logf("%v waiter retried after: %v", w.lock.Kind, w.signal.last)
		case err := <-w.done:
			t.Fatalf("%v waiter returned while the server was down: %v", w.lock.Kind, err)
		case <-ctx.Done():
			t.Fatalf("%v waiter saw no transient error while the server was down", w.lock.Kind)
		}
	}
	tryOnce := runtime.New(redis.NewClient(srv.Options()), runtime.WithKeyPrefix(prefix))
	defer tryOnce.Close()
	start := time.Now()
	if _, err := tryOnce.Acquire(ctx, runtime.Lock{Kind: runtime.Mutex, Key: "m", Wait: runtime.NoWait}); err == nil || errors.Is(err, runtime.ErrNotAcquired) {
		t.Errorf("try-once while the server is down: %v; want the connection error", err)
	}
	short := runtime.Lock{Kind: runtime.Mutex, Key: "m", Wait: 300 * time.Millisecond}
	if _, err := tryOnce.Acquire(ctx, short); err == nil || errors.Is(err, runtime.ErrNotAcquired) {
		t.Errorf("wait 300ms while the server is down: %v; want the connection error", err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("try-once and a 300ms wait took %v while the server was down; want them bounded by their waits", took)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		if err := <-w.done; err != nil {
			t.Errorf("%v waiter after the restart: %v", w.lock.Kind, err)
		}
		if w.signal.sameHolder() {
			t.Errorf("%v waiter got the lock under a holder id that had met a transient error", w.lock.Kind)
		}
	}
}
