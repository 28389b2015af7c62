package faults

import (
	"testing"
	"time"

	"github.com/lockgen/lockgen/runtime"
	"github.com/redis/go-redis/v9"
)

// (e) An acquire whose reply times out (client ReadTimeout 200 ms, the
// server in a DEBUG SLEEP 0.5 while the acquire is in flight) runs in Redis
// after the client gave up. Whatever it took must be given back: once the
// clean-up has run, no key of the caller is left. With retries on,
// go-redis sends the acquire again on a new connection; if Acquire then
// succeeds, its Release must leave nothing either.
func TestTimedOutAcquireLeavesNoKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		tune func(*redis.Options)
	}{
		{"retries off", both(readTimeout(200*time.Millisecond), noRetries)},
		{"retries on", readTimeout(200 * time.Millisecond)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, kind := range []runtime.Kind{runtime.Mutex, runtime.Fair} {
				timedOutAcquire(t, tc.tune, kind)
			}
		})
	}
}

func timedOutAcquire(t *testing.T, tune func(*redis.Options), kind runtime.Kind) {
	e := newEnv(t)
	s := e.locker(e.client(e.srv.Addr, tune), "e")
	lock := runtime.Lock{Kind: kind, Key: "timeout"} // the default 30 s lease
	warmScripts(t, s, lock)

	slept, err := e.srv.DebugSleep(500 * time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	o := acquire(ctxFor(t, 10*time.Second), s, lock)
	if err := <-slept; err != nil {
		t.Fatalf("DEBUG SLEEP: %v", err)
	}
	t.Logf("%v acquire during a 0.5 s DEBUG SLEEP, ReadTimeout 200 ms: returned after %v: %v", kind, o.took().Round(time.Millisecond), o.err)
	if o.err == nil {
		rerr := o.held.Release()
		t.Logf("%v release: %v", kind, rerr)
		checkGone(t, e, o.holder, rerr)
		waitCleanedUp(t, e, s, o.holder)
		noTrace(t, e, o.holder, "(e) acquire retried by go-redis, then released")
		return
	}
	checkFailedAcquire(t, e, s, o, kind.String()+" acquire that timed out")
}
