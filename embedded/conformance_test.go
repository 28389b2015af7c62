package embedded_test

import (
	"testing"

	"github.com/lockgen/lockgen/backend"
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
		Servers:   []backend.Backend{b},
	})
}

// The suite on a quorum Locker over three embedded backends, shared by
// every Locker (Close leaves an embedded backend as it was).
func TestQuorumConformance(t *testing.T) {
	servers := []backend.Backend{embedded.NewBackend(nil), embedded.NewBackend(nil), embedded.NewBackend(nil)}
	backendtest.Run(t, backendtest.Quorum(servers, func() []backend.Backend { return servers }))
}
