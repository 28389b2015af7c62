package runtime

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/lua"
)

// NoWait as Lock.Wait: try once and fail with ErrNotAcquired if the lock is
// busy. Any negative Wait means the same. It is what an annotation's wait=0
// becomes: Lock.Wait 0 means the opposite, wait until ctx is done.
const NoWait time.Duration = -1

// Lock describes one lock on one rendered key: what a //lock: annotation
// says, with its key template already rendered.
type Lock struct {
	Kind    Kind
	Key     string        // rendered key: escaped values (EscapeKeyPart), no braces, no prefix
	Lease   time.Duration // 0: the Locker's default lease (30s unless WithDefaultLease)
	NoRenew bool          // true: no watchdog; the holder's context gets a deadline inside the lease
	// Wait bounds the wait for the lock. 0 (unset): until ctx is done;
	// > 0: at most this long; NoWait (any negative value): try once.
	// Unlike the annotation's wait=, where wait=0 tries once: the
	// generator writes wait=0 as NoWait, and so must hand-written code.
	Wait    time.Duration
	Permits int // Semaphore only, >= 1

	// Method and Template name the lock for observers, with low
	// cardinality: generated code sets them to "Type.Method" and the
	// annotation's key template ("order:<id>"). The runtime does not use
	// them otherwise; hand-written code may leave them empty.
	Method   string
	Template string
}

// maxLease is the largest lease the scripts accept (2^31 ms, about 24 days).
const maxLease = time.Duration(math.MaxInt32+1) * time.Millisecond

// lockSpec is a validated Lock with everything derived from it that the
// scripts need.
type lockSpec struct {
	Lock
	base  string   // prefix + family + ":{" + Key + "}"
	keys  []string // KEYS of every script of the family
	wake  string   // the wake channel, the last of keys
	lease time.Duration
}

// resolve validates l and fills in defaults. The keys go into keyStore if
// it has room for them (a Held's, for its first lock), else into a slice of
// their own.
func (lk *Locker) resolve(l Lock, keyStore []string) (lockSpec, error) {
	if !l.Kind.valid() {
		return lockSpec{}, fmt.Errorf("%w: unknown kind %d; want one of mutex, fair, read, write, semaphore", ErrInvalidLock, l.Kind)
	}
	if lk.caps.Quorum && l.Kind != Mutex {
		return lockSpec{}, fmt.Errorf("%w: kind %s is not supported on a quorum Locker (mutex only)", ErrInvalidLock, l.Kind)
	}
	if err := validateKey(l.Key); err != nil {
		return lockSpec{}, err
	}
	lease := l.Lease
	if lease == 0 {
		lease = lk.lease
	}
	if lease < time.Millisecond || lease > maxLease {
		return lockSpec{}, fmt.Errorf("%w: %s %q: lease %v outside 1ms..%v", ErrInvalidLock, l.Kind, l.Key, lease, maxLease)
	}
	switch {
	case l.Kind == Semaphore && l.Permits < 1:
		return lockSpec{}, fmt.Errorf("%w: semaphore %q: permits %d, want >= 1", ErrInvalidLock, l.Key, l.Permits)
	case l.Kind != Semaphore && l.Permits != 0:
		return lockSpec{}, fmt.Errorf("%w: %s %q: permits is for semaphores only", ErrInvalidLock, l.Kind, l.Key)
	}
	keys := l.Kind.family().RenderKeys(lk.prefix, l.Key, keyStore)
	return lockSpec{Lock: l, base: keys[0], keys: keys, wake: keys[len(keys)-1], lease: lease}, nil
}

// resolveAll validates locks, sorts them into the canonical order (base key,
// then kind) and drops exact duplicates (a slice placeholder with a repeated
// element), keeping the longest lease and the shortest wait of the copies.
// It appends them to specs (which has room for one in a Held); a lone
// lock's keys go into keyStore (the Held's too), and it needs no sorting.
func (lk *Locker) resolveAll(locks []Lock, specs []lockSpec, keyStore []string) ([]lockSpec, error) {
	switch len(locks) {
	case 0:
		return nil, fmt.Errorf("%w: Acquire needs at least one Lock", ErrInvalidLock)
	case 1:
		s, err := lk.resolve(locks[0], keyStore)
		if err != nil {
			return nil, err
		}
		return append(specs, s), nil
	}
	for _, l := range locks {
		s, err := lk.resolve(l, nil)
		if err != nil {
			return nil, err
		}
		specs = append(specs, s)
	}
	slices.SortStableFunc(specs, func(a, b lockSpec) int {
		if c := strings.Compare(a.base, b.base); c != 0 {
			return c
		}
		return a.Kind.rank() - b.Kind.rank()
	})
	out := specs[:1]
	for _, s := range specs[1:] {
		last := &out[len(out)-1]
		if s.base != last.base || s.Kind != last.Kind {
			out = append(out, s)
			continue
		}
		if s.Kind == Semaphore && s.Permits != last.Permits {
			return nil, fmt.Errorf("%w: semaphore %q asked with permits %d and %d in one call", ErrInvalidLock, s.Key, last.Permits, s.Permits)
		}
		last.lease = max(last.lease, s.lease)
		last.NoRenew = last.NoRenew && s.NoRenew
		last.Wait = shorterWait(last.Wait, s.Wait)
	}
	return out, nil
}

// shorterWait returns the stricter of two Lock.Wait values: a try-once beats
// any duration, any duration beats "until ctx is done".
func shorterWait(a, b time.Duration) time.Duration {
	switch {
	case a < 0 || b < 0:
		return NoWait
	case a == 0:
		return b
	case b == 0:
		return a
	}
	return min(a, b)
}

// waitOf returns the wait of a call that takes specs together, the
// shortest of their Waits, and when it ends (zero: until ctx is done).
func waitOf(specs []lockSpec, start time.Time) (wait time.Duration, deadline time.Time) {
	wait = specs[0].Wait
	for _, s := range specs[1:] {
		wait = shorterWait(wait, s.Wait)
	}
	if wait > 0 {
		deadline = start.Add(wait)
	}
	return wait, deadline
}

// sharesBase reports whether one of specs is on base: the read side of a
// key taken with its write side in one call needs the same holder id.
func sharesBase(specs []lockSpec, base string) bool {
	for _, s := range specs {
		if s.base == base {
			return true
		}
	}
	return false
}

// args returns ARGV for the family's scripts other than acquire: holder
// id, lease in milliseconds, publish command.
func (s *lockSpec) args(holder, publish string) []string {
	return []string{holder, strconv.FormatInt(s.lease.Milliseconds(), 10), publish}
}

// call returns the Call of one of the kind's scripts with holder's ARGV (not
// for acquire), for the clean-ups, which are rare: the hold's own calls
// share their values (commonCall).
func (s *lockSpec) call(script *lua.Script, holder, publish string) backend.Call {
	return backend.Call{Script: script, Keys: s.keys, Args: s.args(holder, publish)}
}

// withLease returns the Lock with its effective lease filled in, for events.
func (s *lockSpec) withLease() Lock {
	l := s.Lock
	l.Lease = s.lease
	return l
}

// String names the lock for error messages: `mutex "order:42"`.
func (s *lockSpec) String() string { return s.Kind.String() + " " + strconv.Quote(s.Key) }
