package faults

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/goredisbackend"
	"github.com/lockgen/lockgen/redistest"
	"github.com/lockgen/lockgen/runtime"
	"github.com/redis/go-redis/v9"
)

// env is one case's world: its own redis-server (a DEBUG SLEEP or a
// restart must not disturb the other cases), the key prefix of its locks,
// and a client straight to the server for inspection.
type env struct {
	t      *testing.T
	srv    *redistest.Server
	prefix string
	direct *redis.Client
}

func newEnv(t *testing.T) *env {
	t.Helper()
	srv := redistest.Start(t, redistest.EnableDebugCommand...)
	return &env{t: t, srv: srv, prefix: "lockgen:", direct: srv.Client(t)}
}

// client returns a go-redis client to addr (the server, or a proxy in
// front of it), adjusted by tune, closed when the test ends.
func (e *env) client(addr string, tune func(*redis.Options)) *redis.Client {
	o := &redis.Options{Addr: addr}
	if tune != nil {
		tune(o)
	}
	c := redis.NewClient(o)
	e.t.Cleanup(func() { c.Close() })
	return c
}

// Client options the cases use.
func readTimeout(d time.Duration) func(*redis.Options) {
	return func(o *redis.Options) { o.ReadTimeout = d }
}

func noRetries(o *redis.Options) { o.MaxRetries = -1 }

func both(fs ...func(*redis.Options)) func(*redis.Options) {
	return func(o *redis.Options) {
		for _, f := range fs {
			f(o)
		}
	}
}

// subject is a Locker under test with its event log and the holder ids it
// has used.
type subject struct {
	*runtime.Locker
	ev  *eventLog
	ids *idSource
}

// locker returns a Locker over rdb whose holder ids start with "p" and tag
// and whose events go to a new log. It is closed when the test ends.
func (e *env) locker(rdb *redis.Client, tag string, opts ...runtime.Option) *subject {
	return e.lockerOn(goredisbackend.New(rdb), tag, opts...)
}

// lockerOn is locker over any Backend (a wrapper that watches the calls).
func (e *env) lockerOn(b backend.Backend, tag string, opts ...runtime.Option) *subject {
	s := &subject{ev: newEventLog(), ids: newIDSource("p" + tag)}
	all := append([]runtime.Option{
		runtime.WithKeyPrefix(e.prefix),
		runtime.WithHolderIDs(s.ids.next),
		runtime.WithObserver(s.ev.observe),
	}, opts...)
	s.Locker = runtime.NewWithBackend(b, all...)
	e.t.Cleanup(func() { s.Close() })
	return s
}

// Holder ids all have the same length, so that one can never be a part of
// another, and the trace scan can look for an id as a substring of
// anything stored. A tag is padded or cut to 4 bytes; the sequence number
// is unique in the process (and a child process has a tag of its own).
var idSeq atomic.Int64

type idSource struct {
	tag    string
	mu     sync.Mutex
	issued []string
}

func newIDSource(tag string) *idSource { return &idSource{tag: (tag + "xxxx")[:4]} }

func (s *idSource) next() string {
	id := fmt.Sprintf("%s.%06d", s.tag, idSeq.Add(1))
	s.mu.Lock()
	s.issued = append(s.issued, id)
	s.mu.Unlock()
	return id
}

// last returns the id given to the latest Acquire.
func (s *idSource) last() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.issued) == 0 {
		return ""
	}
	return s.issued[len(s.issued)-1]
}

// warmScripts loads every script a kind needs on the server behind l, so
// that a fault injected on the next EVALSHA does not fall on a NOSCRIPT
// round trip.
func warmScripts(t *testing.T, l *subject, locks ...runtime.Lock) {
	t.Helper()
	if err := warm(t, l, locks...); err != nil {
		t.Fatal(err)
	}
}

func warm(t *testing.T, l *subject, locks ...runtime.Lock) error {
	for _, lk := range locks {
		lk.Key = "warm-" + lk.Key
		// Not the case's own Wait, which may be a few hundred ms: on a
		// loaded machine a first call (a connection, then NOSCRIPT and the
		// script's source) can take longer, and the runtime retries a
		// transient failure within the wait. The key is free, so nothing
		// waits for the lock; the context bounds the warm-up.
		lk.Wait = 0
		h, err := l.Acquire(ctxFor(t, 10*time.Second), lk)
		if err != nil {
			return fmt.Errorf("warm-up acquire %v %q: %w", lk.Kind, lk.Key, err)
		}
		if err := h.Release(); err != nil {
			return fmt.Errorf("warm-up release %v %q: %w", lk.Kind, lk.Key, err)
		}
	}
	return nil
}

// warmThroughProxy is warmScripts for a subject that reaches the server
// through proxy; if the warm-up fails, it says what the proxy refused.
func warmThroughProxy(t *testing.T, l *subject, proxy *redistest.Proxy, locks ...runtime.Lock) {
	t.Helper()
	if err := warm(t, l, locks...); err != nil {
		n, last := proxy.Refused()
		t.Fatalf("%v (its proxy closed %d connections on arrival; the last because: %v)", err, n, last)
	}
}

// ctxFor returns a context that ends after d or with the test.
func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// outcome is what one Acquire call did, and when.
type outcome struct {
	holder   string
	held     *runtime.Held
	err      error
	called   time.Time
	returned time.Time
}

func (o outcome) took() time.Duration { return o.returned.Sub(o.called) }

// acquire runs l.Acquire and records its outcome. Calls of one subject
// must not overlap, so that the holder id is the one of this call.
func acquire(ctx context.Context, l *subject, locks ...runtime.Lock) outcome {
	o := outcome{called: time.Now()}
	o.held, o.err = l.Acquire(ctx, locks...)
	o.returned = time.Now()
	o.holder = l.ids.last()
	return o
}

// acquireAsync runs acquire in a goroutine.
func acquireAsync(ctx context.Context, l *subject, locks ...runtime.Lock) <-chan outcome {
	ch := make(chan outcome, 1)
	go func() { ch <- acquire(ctx, l, locks...) }()
	return ch
}

// await receives an outcome, failing the test if none comes within d.
func await(t *testing.T, ch <-chan outcome, d time.Duration, what string) outcome {
	t.Helper()
	select {
	case o := <-ch:
		return o
	case <-time.After(d):
		t.Fatalf("%s: Acquire did not return within %v", what, d)
		return outcome{}
	}
}

// allKinds is one lock of every kind, on key k.
func allKinds(k string, lease time.Duration) []runtime.Lock {
	return []runtime.Lock{
		{Kind: runtime.Mutex, Key: k, Lease: lease},
		{Kind: runtime.Fair, Key: k, Lease: lease},
		{Kind: runtime.Read, Key: k, Lease: lease},
		{Kind: runtime.Write, Key: k + "-w", Lease: lease},
		{Kind: runtime.Semaphore, Key: k, Lease: lease, Permits: 2},
	}
}
