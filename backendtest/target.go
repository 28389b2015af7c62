package backendtest

import (
	"context"
	"testing"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/quorum"
	"github.com/lockgen/lockgen/runtime"
)

// Target is one deployment the suite runs on.
type Target struct {
	// NewLocker returns a new Locker on the deployment, as another process
	// would have one, with opts applied after its own options (the suite
	// passes a key prefix of its own, and observers). Lockers from one
	// Target must share the keyspace. The suite closes every Locker it
	// makes; closing one must not break the others.
	NewLocker func(t *testing.T, opts ...runtime.Option) *runtime.Locker

	// Servers are for the suite to read and delete lock keys behind the
	// Lockers' back: one Backend for a single server, the embedded shim or
	// a Cluster (calls are routed by key), one per server for a quorum. No
	// Locker may own them: the suite uses them after closing Lockers.
	Servers []backend.Backend

	// Kinds are the kinds the target takes; nil means every kind (a quorum
	// Locker takes only mutexes).
	Kinds []runtime.Kind
}

// allKinds is every kind the suite knows, in the order it runs them.
var allKinds = []runtime.Kind{runtime.Mutex, runtime.Fair, runtime.Read, runtime.Write, runtime.Semaphore}

// Run runs the suite's scenarios on tg as subtests of t.
func Run(t *testing.T, tg Target) {
	t.Helper()
	if tg.NewLocker == nil || len(tg.Servers) == 0 {
		t.Fatal("backendtest: a Target needs NewLocker and at least one of Servers")
	}
	if tg.Kinds == nil {
		tg.Kinds = allKinds
	}
	for _, sc := range []struct {
		name string
		run  func(e *env, kind runtime.Kind)
	}{
		{"Admits", admits},
		{"MutualExclusion", mutualExclusion},
		{"WakeUp", wakeUp},
		{"Reentry", reentry},
		{"Loss", loss},
		{"Close", closeStops},
	} {
		t.Run(sc.name, func(t *testing.T) {
			for _, kind := range tg.Kinds {
				t.Run(kind.String(), func(t *testing.T) { sc.run(newEnv(t, tg), kind) })
			}
		})
	}
}

// env is one scenario's view of the target: its own key prefix, so that
// scenarios on a shared server never meet each other's keys.
type env struct {
	t      *testing.T
	tg     Target
	prefix string
}

func newEnv(t *testing.T, tg Target) *env {
	return &env{t: t, tg: tg, prefix: KeyPrefix(t)}
}

// locker returns a new Locker on the scenario's prefix, closed when the
// scenario ends.
func (e *env) locker(opts ...runtime.Option) *runtime.Locker {
	e.t.Helper()
	l := e.tg.NewLocker(e.t, append([]runtime.Option{runtime.WithKeyPrefix(e.prefix)}, opts...)...)
	if l == nil {
		e.t.Fatal("backendtest: NewLocker returned nil")
	}
	e.t.Cleanup(func() { l.Close() })
	return l
}

// ctx bounds the scenario's waits.
func (e *env) ctx(d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	e.t.Cleanup(cancel)
	return ctx
}

// longLease is the lease of locks whose waiters must be woken by a
// message: far longer than any scenario's context, so that a waiter let in
// by its lease-based retry fails the scenario instead.
const longLease = 2 * time.Minute

// lockOf is the suite's lock of kind on key: a semaphore has 2 permits.
func lockOf(kind runtime.Kind, key string, lease time.Duration) runtime.Lock {
	l := runtime.Lock{Kind: kind, Key: key, Lease: lease}
	if kind == runtime.Semaphore {
		l.Permits = 2
	}
	return l
}

// exclusive reports whether a holder of kind has the lock to itself.
func exclusive(kind runtime.Kind) bool {
	return kind == runtime.Mutex || kind == runtime.Fair || kind == runtime.Write
}

// capacity is how many holders lockOf(kind) admits at once; readers share
// without a bound, and the suite tries 5.
func capacity(kind runtime.Kind) int {
	switch kind {
	case runtime.Semaphore:
		return 2
	case runtime.Read:
		return 5
	}
	return 1
}

func noWait(l runtime.Lock) runtime.Lock {
	l.Wait = runtime.NoWait
	return l
}

// Quorum is a Target of quorum Lockers (quorum.NewWithBackends),
// mutexes only. Each Locker runs on the backends lockerBackends returns:
// new ones per call where a Locker's Close would disturb others sharing
// them (go-redis backends end their subscriptions), or the same ones where
// Close does nothing (embedded). servers, one per quorum member, are the
// suite's and must stay open.
func Quorum(servers []backend.Backend, lockerBackends func() []backend.Backend) Target {
	return Target{
		NewLocker: func(t *testing.T, opts ...runtime.Option) *runtime.Locker {
			l, err := quorum.NewWithBackends(lockerBackends(), opts...)
			if err != nil {
				t.Fatalf("quorum.NewWithBackends: %v", err)
			}
			return l
		},
		Servers: servers,
		Kinds:   []runtime.Kind{runtime.Mutex},
	}
}
