package runtime

import "context"

// Fence returns the fencing token of the innermost lock held by ctx: the
// lock of the innermost Acquire whose Held.Context ctx is or derives from,
// and of its locks the last in the canonical order (by key). Tokens are
// strictly increasing per key across holders, so storage that remembers the
// largest token it has seen can refuse a write from a holder that lost its
// lock to another. A re-entry has the token of the outer hold. ok is false
// if ctx holds no lock.
func Fence(ctx context.Context) (token int64, ok bool) {
	c := chainOf(ctx)
	if c == nil || len(c.held.locks) == 0 {
		return 0, false
	}
	return c.held.locks[len(c.held.locks)-1].hold.fence, true
}

// FenceFor returns the fencing token of the lock of the given kind on the
// rendered key held by ctx (innermost first), for calls that hold several
// locks. ok is false if ctx holds no such lock.
func FenceFor(ctx context.Context, kind Kind, key string) (token int64, ok bool) {
	for c := chainOf(ctx); c != nil; c = c.parent {
		for i := len(c.held.locks) - 1; i >= 0; i-- {
			if hl := c.held.locks[i]; hl.spec.Kind == kind && hl.spec.Key == key {
				return hl.hold.fence, true
			}
		}
	}
	return 0, false
}
