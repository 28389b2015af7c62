package runtime

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/lockgen/lockgen/internal/family"
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

// parseInspect reads { now_ms, last_fence, holders, waiters, claim } (see
// lua/prelude.lua).
func parseInspect(reply any) (LockState, error) {
	bad := fmt.Errorf("unexpected inspect reply %#v", reply)
	a, ok := reply.([]any)
	if !ok || len(a) != 5 {
		return LockState{}, bad
	}
	now, ok1 := a[0].(int64)
	fence, ok2 := a[1].(int64)
	hs, ok3 := a[2].([]any)
	ws, ok4 := a[3].([]any)
	claim, ok5 := a[4].([]any)
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || len(hs)%4 != 0 {
		return LockState{}, bad
	}
	st := LockState{LastFence: fence}
	for i := 0; i < len(hs); i += 4 {
		id, ok1 := hs[i].(string)
		side, ok2 := hs[i+1].(string)
		f, ok3 := hs[i+2].(int64)
		until, ok4 := hs[i+3].(int64)
		kind, ok5 := kindNamed(side)
		if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 {
			return LockState{}, bad
		}
		st.Holders = append(st.Holders, HolderState{ID: id, Kind: kind, Fence: f, LeaseLeft: msBetween(now, until)})
	}
	var err error
	if st.Waiters, err = parseWaiters(ws, now); err != nil {
		return LockState{}, bad
	}
	cl, err := parseWaiters(claim, now)
	if err != nil || len(cl) > 1 {
		return LockState{}, bad
	}
	if len(cl) == 1 {
		st.WriterWaiting = &cl[0]
	}
	return st, nil
}

// parseWaiters reads a flat list of <id, deadline ms>.
func parseWaiters(flat []any, now int64) ([]WaiterState, error) {
	if len(flat)%2 != 0 {
		return nil, fmt.Errorf("odd list")
	}
	var out []WaiterState
	for i := 0; i < len(flat); i += 2 {
		id, ok1 := flat[i].(string)
		until, ok2 := flat[i+1].(int64)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("bad entry")
		}
		out = append(out, WaiterState{ID: id, Left: msBetween(now, until)})
	}
	return out, nil
}

func msBetween(now, until int64) time.Duration {
	return time.Duration(until-now) * time.Millisecond
}

// kindNamed is the inverse of Kind.String.
func kindNamed(name string) (Kind, bool) {
	for k := Mutex; k <= Semaphore; k++ {
		if families[k].Name == name {
			return k, true
		}
	}
	return 0, false
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
	return 0, fmt.Errorf("%w: unknown kind %q; want one of %s", ErrInvalidLock, name, kindList())
}

// kindList is the kinds' names for an error message: "mutex, fair, ...".
func kindList() string {
	names := make([]string, 0, Semaphore)
	for k := Mutex; k <= Semaphore; k++ {
		names = append(names, families[k].Name)
	}
	return strings.Join(names, ", ")
}
