package runtime_test

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/runtime"
)

// The read side a writer takes under its own holder id, through a nested
// Acquire, survives the clean-up of a sibling nested read Acquire of the
// same chain that failed without a reply: both share the writer's holder
// id, and the clean-up of the failed one must not give back the read side
// the other one holds (before: it did, and the holder lost it).
func TestFailedSiblingReadKeepsWritersReadSide(t *testing.T) {
	t.Parallel()
	forEachTarget(t, func(t *testing.T, tg target) {
		var mu sync.Mutex
		cleaned := make(chan runtime.Event, 4)
		l := tg.newLockerVia(t, func(b backend.Backend) backend.Backend { return &dropFirstReply{Backend: b, script: "read_acquire"} },
			runtime.WithObserver(func(e runtime.Event) {
				if e.Kind == runtime.EventCleanedUp {
					mu.Lock()
					cleaned <- e
					mu.Unlock()
				}
			}))
		ctx := ctxTimeout(t, 10*time.Second)
		w, err := l.Acquire(ctx, runtime.Lock{Kind: runtime.Write, Key: "sib", Lease: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		read := runtime.Lock{Kind: runtime.Read, Key: "sib", Lease: 5 * time.Second}
		if _, err := l.Acquire(w.Context(), read); err == nil {
			t.Fatal("the read acquire whose reply was dropped succeeded")
		}
		r, err := l.Acquire(w.Context(), read)
		if err != nil {
			t.Fatalf("second nested read acquire: %v", err)
		}
		select {
		case e := <-cleaned:
			t.Logf("clean-up of %s: %v", e.Holder, e.Err)
		case <-time.After(time.Second):
			// Nothing queued, or dropped without an event: both fine.
		}
		if err := r.Release(); err != nil {
			t.Errorf("release of the read side the writer holds, after its sibling's clean-up: %v", err)
		}
		if err := w.Release(); err != nil {
			t.Errorf("release of the write side: %v", err)
		}
	})
}

// dropFirstReply runs the first call of script, then reports a lost
// connection instead of its reply.
type dropFirstReply struct {
	backend.Backend
	script  string
	dropped atomic.Bool
}

func (d *dropFirstReply) Eval(ctx context.Context, c backend.Call) (any, error) {
	v, err := d.Backend.Eval(ctx, c)
	if err == nil && c.Script != nil && c.Script.Name == d.script && d.dropped.CompareAndSwap(false, true) {
		return nil, errors.Join(errors.New("reply lost"), io.ErrUnexpectedEOF)
	}
	return v, err
}
