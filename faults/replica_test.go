package faults

import (
	"testing"
	"time"

	"github.com/lockgen/lockgen/redistest"
	"github.com/lockgen/lockgen/runtime"
	"github.com/redis/go-redis/v9"
)

// (j) With WithReplicas, the acquire and a WAIT go in one pipeline. A WAIT
// that errors, rather than reporting too few replicas, must not leave the
// lock held: the acquire may have run. The server has no replica, so no
// Acquire can succeed; after it returns and the clean-up has run, no trace
// of the holder may be left.
//
//   - cut: the proxy closes the connection right after forwarding the
//     EVALSHA+WAIT pipeline (the server runs both), with go-redis retries
//     on (it sends the pipeline again) and off;
//   - read timeout: WAIT 1 with a 2 s timeout on a client whose ReadTimeout
//     is 300 ms, with retries on and off;
//   - too few replicas: WAIT returns 0 within its timeout, the ordinary
//     ErrNotReplicated path, for comparison.
func TestFailedWaitLeavesNoHold(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		cut     bool
		tune    func(*redis.Options)
		timeout time.Duration // of WAIT
	}{
		{"cut, retries on", true, nil, 200 * time.Millisecond},
		{"cut, retries off", true, noRetries, 200 * time.Millisecond},
		{"read timeout, retries on", false, readTimeout(300 * time.Millisecond), 2 * time.Second},
		{"read timeout, retries off", false, both(readTimeout(300*time.Millisecond), noRetries), 2 * time.Second},
		{"too few replicas", false, nil, 100 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			addr := e.srv.Addr
			var p *redistest.Proxy
			if tc.cut {
				p = redistest.StartProxy(t, e.srv.Addr)
				addr = p.Addr
			}
			lock := runtime.Lock{Kind: runtime.Mutex, Key: "replicated"}
			plain := e.locker(e.client(addr, tc.tune), "jw")
			warmScripts(t, plain, lock) // loads the script; WAIT needs none
			s := e.locker(e.client(addr, tc.tune), "j", runtime.WithReplicas(1, tc.timeout))
			var fired <-chan struct{}
			if tc.cut {
				fired = p.CloseAfterNext("WAIT")
			}
			o := acquire(ctxFor(t, 20*time.Second), s, lock)
			if fired != nil {
				awaitFired(t, fired)
			}
			t.Logf("(j) WithReplicas(1, %v), %s: Acquire returned after %v: %v", tc.timeout, tc.name, o.took().Round(time.Millisecond), o.err)
			if o.err == nil {
				t.Errorf("Acquire succeeded with WithReplicas(1) and no replica")
				rerr := o.held.Release()
				checkGone(t, e, o.holder, rerr)
				return
			}
			checkFailedAcquire(t, e, s, o, "(j) "+tc.name)
		})
	}
}
