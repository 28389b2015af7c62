package goredis

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/lua"
)

// recordingBackend answers every call with reply, after running during (if
// set), and records the calls.
type recordingBackend struct {
	backend.Backend // nil: only Eval and EvalWait are called
	reply           any
	during          func()
	calls           []backend.Call
}

func (b *recordingBackend) Eval(_ context.Context, c backend.Call) (any, error) {
	b.calls = append(b.calls, c)
	if b.during != nil {
		b.during()
	}
	return b.reply, nil
}

func (b *recordingBackend) EvalWait(ctx context.Context, c backend.Call, _ int, _ time.Duration) (any, int, error) {
	v, err := b.Eval(ctx, c)
	return v, 1, err
}

// checkedGuard is a guard whose last check (at the current dial count)
// said that grants open at openAt, so that OpenIn asks no server.
func checkedGuard(openAt time.Time) *RestartGuard {
	return &RestartGuard{maxLease: time.Minute, checked: true, openAt: openAt}
}

var guardedScripts = map[*lua.Script]*lua.Script{lua.MutexAcquire: lua.MutexRelease}

func acquireCall() backend.Call {
	return backend.Call{Script: lua.MutexAcquire, Keys: []string{"k", "k:waiters", "k:wake"}, Args: []string{"h1", "5000", "PUBLISH", "0"}}
}

// A closed guard refuses an acquire without running it: a busy reply that
// waits until the guard opens, never longer than the lease (ARGV[2]).
// Other scripts run as they are.
func TestGuardRefusesAcquiresWhileClosed(t *testing.T) {
	inner := &recordingBackend{reply: []any{int64(1), int64(7)}}
	b := checkedGuard(time.Now().Add(time.Hour)).Guard(inner, guardedScripts)
	v, err := b.Eval(context.Background(), acquireCall())
	if err != nil || !reflect.DeepEqual(v, []any{int64(0), int64(5000)}) || len(inner.calls) != 0 {
		t.Fatalf("acquire: %v, %v, %d calls run; want {0, 5000} (the lease) and nothing run", v, err, len(inner.calls))
	}
	renew := backend.Call{Script: lua.MutexRenew, Keys: []string{"k"}, Args: []string{"h1", "5000", "PUBLISH"}}
	if _, acked, err := b.EvalWait(context.Background(), renew, 1, time.Second); err != nil || acked != 1 || len(inner.calls) != 1 {
		t.Fatalf("renewal: acked %d, %v, %d calls run; want it passed through", acked, err, len(inner.calls))
	}
}

// An open guard lets an acquire run; a grant made on a connection dialled
// meanwhile, on a server that turns out to be fresh, is given back (the
// kind's release, same KEYS, ARGV holder, lease, publish command) and
// refused.
func TestGuardGivesBackAGrantFromAFreshServer(t *testing.T) {
	g := checkedGuard(time.Now().Add(-time.Second))
	inner := &recordingBackend{reply: []any{int64(1), int64(7)}}
	b := g.Guard(inner, guardedScripts)
	if v, err := b.Eval(context.Background(), acquireCall()); err != nil || !reflect.DeepEqual(v, inner.reply) {
		t.Fatalf("acquire on an open guard: %v, %v; want the grant", v, err)
	}
	inner.calls = nil
	inner.during = func() { // a reconnection during the call, to a server up for 2s
		inner.during = nil
		g.dials.Add(1)
		g.mu.Lock()
		g.atDials, g.openAt = g.dials.Load(), time.Now().Add(time.Second)
		g.mu.Unlock()
	}
	v, err := b.Eval(context.Background(), acquireCall())
	if err != nil || len(v.([]any)) != 2 || v.([]any)[0] != int64(0) {
		t.Fatalf("grant on a fresh server: %v, %v; want a busy reply", v, err)
	}
	want := backend.Call{Script: lua.MutexRelease, Keys: acquireCall().Keys, Args: acquireCall().Args[:3]}
	if len(inner.calls) != 2 || !reflect.DeepEqual(inner.calls[1], want) {
		t.Fatalf("calls %+v, want the acquire then its release %+v", inner.calls, want)
	}
}
