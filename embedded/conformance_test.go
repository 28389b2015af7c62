package embedded_test

import (
	"testing"

	"github.com/lockgen/lockgen/backendtest"
	"github.com/lockgen/lockgen/embedded"
	"github.com/lockgen/lockgen/runtime"
)

// The conformance suite on one embedded backend shared by every Locker:
// Lockers on one Backend contend like processes on one Redis, and a release
// by one wakes a waiter of another by a message.
func TestConformance(t *testing.T) {
	b := embedded.NewBackend(nil)
	backendtest.Run(t, backendtest.Target{
		NewLocker: func(t *testing.T, opts ...runtime.Option) *runtime.Locker { return runtime.NewWithBackend(b, opts...) },
		Servers:   []runtime.Backend{b},
	})
}

// The suite on a quorum Locker over three embedded backends.
func TestQuorumConformance(t *testing.T) {
	servers := []runtime.Backend{embedded.NewBackend(nil), embedded.NewBackend(nil), embedded.NewBackend(nil)}
	backendtest.Run(t, backendtest.Target{
		NewLocker: func(t *testing.T, opts ...runtime.Option) *runtime.Locker {
			l, err := runtime.NewQuorumWithBackends(servers, opts...)
			if err != nil {
				t.Fatalf("NewQuorumWithBackends: %v", err)
			}
			return l
		},
		Servers: servers,
		Kinds:   []runtime.Kind{runtime.Mutex},
	})
}
