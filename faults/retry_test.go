package faults

import (
	"testing"
	"time"

	"github.com/lockgen/lockgen/redistest"
	"github.com/lockgen/lockgen/runtime"
)

// (f) go-redis retries a command whose connection dropped (MaxRetries
// defaults to 3), so a script the server ran once may run again for the
// same holder. The proxy forwards the acquire (or release) and closes the
// client's connection before the reply: the server has run it, the client
// sees EOF and retries. Whatever Acquire returns, after Release (if it
// succeeded) and the clean-up, no trace of the holder may be left; and a
// Release that returned nil must have left nothing at once (b).
func TestRetryAfterDroppedConnectionLeavesNoHold(t *testing.T) {
	t.Parallel()
	for _, lock := range allKinds("retry", 0) {
		t.Run("acquire "+lock.Kind.String(), func(t *testing.T) {
			t.Parallel()
			e, p, s := retryEnv(t, lock)
			fired := p.CloseAfterNext("EVALSHA")
			o := acquire(ctxFor(t, 10*time.Second), s, lock)
			awaitFired(t, fired)
			t.Logf("(f) %v acquire cut after the request, retried by go-redis: %v", lock.Kind, o.err)
			if o.err == nil {
				rerr := o.held.Release()
				t.Logf("(f) %v release: %v", lock.Kind, rerr)
				checkGone(t, e, o.holder, rerr)
			}
			waitCleanedUp(t, e, s, o.holder)
			noTrace(t, e, o.holder, "(f) "+lock.Kind.String()+" acquire retried after a dropped connection")
		})
	}
	for _, kind := range []runtime.Kind{runtime.Mutex, runtime.Fair} {
		t.Run("release "+kind.String(), func(t *testing.T) {
			t.Parallel()
			lock := runtime.Lock{Kind: kind, Key: "retry"}
			e, p, s := retryEnv(t, lock)
			o := acquire(ctxFor(t, 10*time.Second), s, lock)
			if o.err != nil {
				t.Fatal(o.err)
			}
			fired := p.CloseAfterNext("EVALSHA")
			rerr := o.held.Release()
			awaitFired(t, fired)
			t.Logf("(f) %v release cut after the request, retried by go-redis: %v", kind, rerr)
			checkGone(t, e, o.holder, rerr)
			waitCleanedUp(t, e, s, o.holder)
			noTrace(t, e, o.holder, "(f) "+kind.String()+" release retried after a dropped connection")
		})
		t.Run("waiter "+kind.String(), func(t *testing.T) {
			t.Parallel()
			lock := runtime.Lock{Kind: kind, Key: "retry", Wait: time.Second}
			e, p, s := retryEnv(t, lock)
			other := e.locker(e.client(e.srv.Addr, nil), "fh")
			h := acquire(ctxFor(t, 10*time.Second), other, runtime.Lock{Kind: kind, Key: "retry"})
			if h.err != nil {
				t.Fatal(h.err)
			}
			fired := p.CloseAfterNext("EVALSHA")
			o := acquire(ctxFor(t, 10*time.Second), s, lock)
			awaitFired(t, fired)
			t.Logf("(f) %v waiter whose first attempt was cut and retried: %v", kind, o.err)
			if o.err == nil {
				t.Fatalf("waiter acquired a lock another holds")
			}
			checkFailedAcquire(t, e, s, o, "(c) "+kind.String()+" waiter retried after a dropped connection")
			rerr := h.held.Release()
			checkGone(t, e, h.holder, rerr)
		})
	}
}

// retryEnv is a server, a proxy in front of it and a Locker through the
// proxy with go-redis's default retries, its scripts loaded.
func retryEnv(t *testing.T, lock runtime.Lock) (*env, *redistest.Proxy, *subject) {
	e := newEnv(t)
	p := redistest.StartProxy(t, e.srv.Addr)
	s := e.locker(e.client(p.Addr, nil), "f")
	lock.Wait = 0
	warmThroughProxy(t, s, p, lock)
	return e, p, s
}

// awaitFired waits until a CloseAfterNext has cut a connection and the
// server has answered the request.
func awaitFired(t *testing.T, fired <-chan struct{}) {
	t.Helper()
	select {
	case <-fired:
	case <-time.After(10 * time.Second):
		t.Fatal("the proxy did not cut a connection after an EVALSHA within 10s")
	}
}
