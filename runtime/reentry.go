package runtime

import (
	"context"
	"fmt"
)

// Reentrancy is per call chain. The context a Held hands to the method
// (Held.Context) carries a link to that Held and, through its parent
// context, to the Helds of the calls around it. A nested Acquire with such a
// context looks the chain up, innermost first, and re-enters a lock the
// chain already holds: it shares that hold (see hold), without a call to
// Redis, and the lock is given back when the last of them is released.
// Anything else (another goroutine with its own context, another request) is
// a different holder and waits like any other client.
//
// Contexts are shared freely in Go, so two goroutines may both pass a held
// context to a nested Acquire. For the exclusive kinds (mutex, fair, write)
// at most one re-entry of a hold is active at a time: the first claims the
// hold, and a concurrent second acquires under a new holder id, so it waits
// until the lock is free. Two goroutines can thus never both believe they
// are inside the same exclusive section through re-entry. (A goroutine
// whose outer holder then waits for it will wait for its own lock, as with
// any non-reentrant lock; its Wait bounds that.) Read and semaphore holds
// are shared by nature, and any number of re-entries may be active.

type chainKey struct{}

// chainLink is one Held on a call chain.
type chainLink struct {
	held   *Held
	parent *chainLink
}

// chainCtx is the context a Held hands out: the Held's own cancellable
// context, which also answers chainKey with the Held's link, as
// context.WithValue would, but as part of the Held instead of two more
// allocations per Acquire. Everything else (cancellation, its cause,
// deadline, other values) is the embedded context's.
type chainCtx struct {
	context.Context
	link chainLink
}

func (c *chainCtx) Value(key any) any {
	if key == (chainKey{}) {
		return &c.link
	}
	return c.Context.Value(key)
}

func chainOf(ctx context.Context) *chainLink {
	c, _ := ctx.Value(chainKey{}).(*chainLink)
	return c
}

// reentry returns the hold of the chain that spec can re-enter, or nil if
// there is none: a hold of the same kind, or, for a read request, the write
// side of the key (the read side is then taken under the writer's holder
// id). claimed is true if a hold nearer to ctx on the chain has already
// claimed it (this call is nested inside that re-entry, so it needs no
// claim of its own). A write request on a key whose read side the chain
// holds, without the write side, can only wait for itself; that is an error.
func (c *chainLink) reentry(spec *lockSpec) (hold *heldLock, claimed bool, err error) {
	var readHeld *heldLock
	inner := map[*heldLock]bool{} // holds claimed by re-entries on the chain below
	for ; c != nil; c = c.parent {
		if c.held.released.Load() {
			continue // a goroutine outlived its caller's hold
		}
		for i := len(c.held.locks) - 1; i >= 0; i-- {
			hl := c.held.locks[i]
			if hl.spec.base != spec.base {
				continue
			}
			switch {
			case hl.spec.Kind == spec.Kind,
				spec.Kind == Read && hl.spec.Kind == Write: // a writer may take the read side under its own id
				if lost := c.held.ended(); lost != nil {
					// Lost, or its renew=false lease ran out: re-entering
					// would claim a lock another may hold by now.
					return nil, false, fmt.Errorf("lockgen: re-enter %s: %w", spec, lost)
				}
				return hl, inner[hl], nil
			case spec.Kind == Write && hl.spec.Kind == Read:
				readHeld = hl
			}
		}
		for _, hl := range c.held.locks {
			if hl.claimed != nil {
				inner[hl.claimed] = true
			}
		}
	}
	if readHeld != nil {
		return nil, false, fmt.Errorf("%w: %s: this call chain holds the read side; a read lock cannot be upgraded to write (it would wait for itself)", ErrInvalidLock, spec)
	}
	return nil, false, nil
}
