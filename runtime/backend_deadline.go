package runtime

import "time"

// HonorsDeadlines marks b as a Backend whose every call (Eval, EvalBatch,
// EvalWait) returns by its context's deadline by itself, as rueidis's
// client calls do. A Locker over it then runs each script call directly on
// the caller's goroutine, with the deadline on the context, instead of on a
// goroutine of its own with a timer, which it does for a client it cannot
// trust to return in time (a go-redis client whose ContextTimeoutEnabled is
// off, say). Mark only a backend that keeps this promise: a call that
// overstays its deadline would hold up an acquire or a release past the
// bounds the Locker promises.
func HonorsDeadlines(b Backend) Backend { return deadlineHonoringBackend{b} }

type deadlineHonoringBackend struct{ Backend }

func (deadlineHonoringBackend) callLimit() (time.Duration, bool) { return 0, true }
