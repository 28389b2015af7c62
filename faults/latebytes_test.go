package faults

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/goredisbackend"
	"github.com/lockgen/lockgen/redistest"
	"github.com/lockgen/lockgen/runtime"
)

// (a) Late bytes after the clean-up. An acquire is sent as a partition
// starts; its wait ends, Acquire returns an error, and go-redis gives the
// connection up after its read timeout, while the acquire's bytes are
// still on the way (the proxy holds them, as the client's TCP would keep
// them in its retransmission queue). The partition then heals for new
// connections only: the clean-up's releases get through and it reports
// success. Only then are the old connection's bytes let through. They must
// not run: a connection the runtime gave up is reset (SO_LINGER 0), which
// discards what its TCP had not delivered. Were they delivered, the
// abandoned holder id would hold the lock for a whole lease, renewed and
// released by nobody.
func TestLateBytesCannotOvertakeCleanUp(t *testing.T) {
	t.Parallel()
	const lease = 10 * time.Second
	e := newEnv(t)
	proxy := redistest.StartProxy(t, e.srv.Addr)
	watch := newReleaseWatch(goredisbackend.New(e.client(proxy.Addr, both(readTimeout(500*time.Millisecond), noRetries))))
	s := e.lockerOn(watch, "lb")
	lock := runtime.Lock{Kind: runtime.Mutex, Key: "late", Lease: lease, Wait: 300 * time.Millisecond}
	warmThroughProxy(t, s, proxy, lock)

	released := watch.arm()
	proxy.SetMode(redistest.Blackhole())
	o := acquire(ctxFor(t, 10*time.Second), s, lock)
	if o.err == nil {
		t.Fatal("Acquire through a blackhole succeeded")
	}
	// The clean-up's first release is sent once the acquire's call has
	// returned, and so once go-redis has closed its connection.
	select {
	case <-released:
	case <-time.After(10 * time.Second):
		t.Fatal("no clean-up release within 10 s of the failed Acquire")
	}
	deliver := proxy.HoldConns()
	defer deliver()
	proxy.SetMode(redistest.Forward())
	cleaned := s.ev.wait(t, runtime.EventCleanedUp, o.holder, 15*time.Second)
	if cleaned.Err != nil {
		t.Fatalf("clean-up after the partition: %v", cleaned.Err)
	}
	if found, err := traces(context.Background(), e.direct, e.prefix, o.holder); err != nil || len(found) > 0 {
		t.Fatalf("right after the clean-up: traces %v, %v", found, err)
	}

	deliver() // the old connection's retransmission finally gets through
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		found, err := traces(context.Background(), e.direct, e.prefix, o.holder)
		if err != nil {
			t.Fatal(err)
		}
		if len(found) > 0 {
			t.Fatalf("(a) the abandoned acquire ran after the clean-up had reported success: %s", strings.Join(found, "; "))
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("(a) old connection let through after the clean-up: nothing of %s in Redis 2 s later", o.holder)
}

// releaseWatch is a Backend that tells when the first call of a release
// script is made once it is armed.
type releaseWatch struct {
	backend.Backend
	armed atomic.Bool
	once  sync.Once
	ch    chan struct{}
}

func newReleaseWatch(b backend.Backend) *releaseWatch {
	return &releaseWatch{Backend: b, ch: make(chan struct{})}
}

// arm makes the next release call close the channel it returns.
func (w *releaseWatch) arm() <-chan struct{} {
	w.armed.Store(true)
	return w.ch
}

func (w *releaseWatch) see(c backend.Call) {
	if w.armed.Load() && c.Script != nil && strings.HasSuffix(c.Script.Name, "_release") {
		w.once.Do(func() { close(w.ch) })
	}
}

func (w *releaseWatch) Eval(ctx context.Context, c backend.Call) (any, error) {
	w.see(c)
	return w.Backend.Eval(ctx, c)
}

func (w *releaseWatch) EvalBatch(ctx context.Context, calls []backend.Call) []backend.Reply {
	for _, c := range calls {
		w.see(c)
	}
	return w.Backend.EvalBatch(ctx, calls)
}
