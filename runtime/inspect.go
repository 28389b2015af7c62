package runtime

import (
	"context"
	"fmt"
	"time"

	"github.com/lockgen/lockgen/internal/family"
	"github.com/lockgen/lockgen/internal/inspectwire"
)

// LockState is what Redis holds for one lock at one moment (Locker.Inspect).
// Entries whose lease or place has run out are left out, as the scripts
// treat them.
type LockState struct {
	Kind Kind   // as asked; Read and Write both describe the whole read/write lock
	Key  string // the rendered key
	Base string // the Redis key of the lock; its other keys add a suffix

	// Holders: a mutex or fair lock's holder; a read/write lock's writer
	// (Kind Write) and then its readers (Kind Read; the writer may read
	// too), the lease that ends first first; a semaphore's permits.
	Holders []HolderState
	// Waiters in the order they are served: a fair lock's queue (Left: how
	// long the place lives without a heartbeat), a mutex's registered
	// waiters (Left: how long the registration lives; a release hands the
	// lock to the first). Busy readers and semaphore callers do not
	// register, so they are not listed.
	Waiters []WaiterState
	// WriterWaiting: a read/write lock's writer that is waiting and holds
	// new readers back until Left has passed; nil if none.
	WriterWaiting *WaiterState
	// Permits: a semaphore's number of permits as the Lock passed to
	// Inspect says (Redis does not store it; 0: not given). len(Holders)
	// are in use.
	Permits int
	// LastFence is the fence floor: the next grant gets a higher fence. 0
	// when the lock left nothing in Redis.
	LastFence int64
}

// HolderState is one holder of a lock.
type HolderState struct {
	ID        string        // the holder id ("<host>:<pid>:..." by default)
	Kind      Kind          // what it holds: Read or Write on a read/write lock; else the lock's kind
	Fence     int64         // the fencing token of its grant
	LeaseLeft time.Duration // until Redis lets the lock go unless renewed
}

// WaiterState is one waiter of a lock.
type WaiterState struct {
	ID   string
	Left time.Duration
}

// Held reports whether anyone holds the lock.
func (s *LockState) Held() bool { return len(s.Holders) > 0 }

// opsHolder is ARGV[1] of the operator's scripts, which check it and do
// not use it.
const opsHolder = "lockgen-operator"

// Inspect reads what Redis holds for lk right now, in one read-only script
// call: holders with fence and lease left, waiters, a waiting writer,
// permits in use. Only Kind and Key of lk matter (and Permits, which is
// reported back; 0 is allowed for a semaphore here). Errors: ErrInvalidLock
// or ErrInvalidKey for a malformed lk, ErrClosed, or the Redis error.
func (l *Locker) Inspect(ctx context.Context, lk Lock) (LockState, error) {
	spec, err := l.resolveOp(lk)
	if err != nil {
		return LockState{}, err
	}
	reply, err := l.backend.Eval(ctx, spec.call(spec.Kind.scripts().inspect, opsHolder, l.publish))
	if err != nil {
		return LockState{}, fmt.Errorf("lockgen: inspect %s: %w", &spec, err)
	}
	st, err := parseInspect(reply)
	if err != nil {
		return LockState{}, fmt.Errorf("lockgen: inspect %s: %w", &spec, err)
	}
	st.Kind, st.Key, st.Base, st.Permits = lk.Kind, lk.Key, spec.base, lk.Permits
	return st, nil
}

// resolveOp validates a Lock given to an operator's call: as for Acquire,
// but a semaphore may leave Permits 0 (unknown).
func (l *Locker) resolveOp(lk Lock) (lockSpec, error) {
	if l.optErr != nil {
		return lockSpec{}, l.optErr
	}
	if l.isClosed() {
		return lockSpec{}, ErrClosed
	}
	if lk.Kind == Semaphore && lk.Permits == 0 {
		lk.Permits = 1
	}
	return l.resolve(lk, nil)
}

// parseInspect maps an inspect script's reply (internal/inspectwire reads
// it) onto a LockState; the caller fills in what describes the lock.
func parseInspect(reply any) (LockState, error) {
	r, err := inspectwire.Decode(reply)
	if err != nil {
		return LockState{}, err
	}
	st := LockState{LastFence: r.LastFence}
	for _, h := range r.Holders {
		kind, _ := kindNamed(h.Side) // Decode let only the family table's names through
		st.Holders = append(st.Holders, HolderState{ID: h.ID, Kind: kind, Fence: h.Fence, LeaseLeft: h.Left})
	}
	for _, w := range r.Waiters {
		st.Waiters = append(st.Waiters, WaiterState(w))
	}
	if r.Claim != nil {
		claim := WaiterState(*r.Claim)
		st.WriterWaiting = &claim
	}
	return st, nil
}

// kindNamed is the inverse of Kind.String: the Kind of a family table row
// is its position plus one (TestKindTable).
func kindNamed(name string) (Kind, bool) {
	i, ok := family.Index(name)
	return Kind(i + 1), ok
}

// ParseKind returns the kind named as in annotations: "mutex", "fair",
// "read", "write" or "semaphore"; a key family as in Redis keys names its
// whole lock ("rw" the read/write lock as Write, "sem" the semaphore).
func ParseKind(name string) (Kind, error) {
	if f, ok := family.OfFamily(name); ok {
		name = f.Name
	}
	if k, ok := kindNamed(name); ok {
		return k, nil
	}
	return 0, fmt.Errorf("%w: unknown kind %q; want one of %s", ErrInvalidLock, name, family.NameList())
}
