package runtime

import (
	"strconv"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/lua"
)

// A go-redis command is a []any, and putting a string in an any allocates.
// The calls a holder makes on one lock (its attempts, renewals, heartbeats
// and release) share their KEYS and the head of their ARGV, so the runtime
// boxes those once per acquisition, and every call carries them along
// (Call.WithBoxed); the go-redis backend then makes only the command's slice.
// The Locker's own ARGV values (publish command, default lease, waiter
// window) are boxed once, in New. Only the go-redis backend reads boxed
// values (Caps.BoxedArgs): over any other, the strings go as they are.

// initArgs makes the Locker's usual ARGV values; the options are applied.
func (l *Locker) initArgs() {
	l.leaseMs = strconv.FormatInt(l.lease.Milliseconds(), 10)
	l.windowMs = strconv.FormatInt(l.waiterWindow.Milliseconds(), 10)
	l.constArgs = []any{l.publish, l.leaseMs, l.windowMs, "0"}
}

// msArg returns d in milliseconds as ARGV, without allocating for the
// Locker's default lease and waiter window.
func (l *Locker) msArg(d time.Duration) string {
	switch d {
	case l.lease:
		return l.leaseMs
	case l.waiterWindow:
		return l.windowMs
	}
	return strconv.FormatInt(d.Milliseconds(), 10)
}

// argStorage holds an acquisition's ARGV and its boxed KEYS and ARGV. It
// is part of the heldLock the acquisition fills, so that they cost no
// allocation of their own; a family with more KEYS or ARGV than it has
// room for would get slices of their own from append.
type argStorage struct {
	args [4]string
	vals [8]any
}

// acquireCall returns the call of s's acquire script for holder, its
// values in st. Its ARGV is holder id, lease in ms, publish command, then
// the permits (semaphore) or the registration window in ms (mutex; 0 for
// a caller that tries once). The family's other scripts take the first
// three (commonCall), so one set of values serves the whole hold.
func (l *Locker) acquireCall(s *lockSpec, holder string, window time.Duration, st *argStorage) backend.Call {
	args := append(st.args[:0], holder, l.msArg(s.lease), l.publish)
	switch s.Kind {
	case Semaphore:
		args = append(args, strconv.Itoa(s.Permits))
	case Mutex:
		args = append(args, l.msArg(window))
	}
	c := backend.Call{Script: s.Kind.scripts().acquire, Keys: s.keys, Args: args}
	if l.caps.BoxedArgs {
		c = c.WithBoxed(l.box(st.vals[:0], s.keys, args))
	}
	return c
}

// commonCall returns the call of script (renew, release, heartbeat) for
// the holder of acquire: the same KEYS, and the first three ARGV. The
// slices are capped, so that an append can never write into acquire's.
func commonCall(acquire backend.Call, script *lua.Script) backend.Call {
	c := backend.Call{Script: script, Keys: acquire.Keys, Args: acquire.Args[:3:3]}
	if vals, ok := acquire.Boxed(); ok {
		n := len(acquire.Keys) + 3
		c = c.WithBoxed(vals[:n:n])
	}
	return c
}

// box appends keys then args to vals, boxed, sharing the Locker's boxed
// values where an argument is one of them.
func (l *Locker) box(vals []any, keys, args []string) []any {
	for _, k := range keys {
		vals = append(vals, k)
	}
	for _, a := range args {
		vals = append(vals, l.boxedArg(a))
	}
	return vals
}

func (l *Locker) boxedArg(s string) any {
	for _, v := range l.constArgs {
		if v == s {
			return v
		}
	}
	return s
}

// withArg returns c with arg appended to its ARGV, in a slice of its own.
func withArg(c backend.Call, arg string) backend.Call {
	c.Args = append(c.Args[:len(c.Args):len(c.Args)], arg)
	return c.WithBoxed(nil)
}
