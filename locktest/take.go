package locktest

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/lockgen/lockgen/internal/family"
	"github.com/lockgen/lockgen/runtime"
)

// lockFamily is k's row of the family table (internal/family): its base
// key is prefix + Family + ":{" + key + "}" (docs/design.md, "Keys").
func lockFamily(k runtime.Kind) (family.Kind, error) {
	f, ok := family.Named(k.String())
	if !ok {
		return family.Kind{}, fmt.Errorf("%w: kind %v", runtime.ErrInvalidLock, k)
	}
	return f, nil
}

// lockKeys finds the server keys of lock, whatever the Locker's key
// prefix: its base key and the keys named after it. It returns the prefix,
// the base key, and the keys; none if the lock is not held.
func (l *Locker) lockKeys(lock runtime.Lock, fam family.Kind) (prefix, base string, keys []string, err error) {
	tail := fam.Family + ":{" + lock.Key + "}"
	for _, k := range l.srv.Snapshot() {
		if strings.HasSuffix(k.Key, tail) {
			base = k.Key
			prefix = strings.TrimSuffix(k.Key, tail)
		}
	}
	if base == "" {
		return "", "", nil, fmt.Errorf("locktest: %s lock %q: %w", lock.Kind, lock.Key, runtime.ErrNotHeld)
	}
	for _, k := range l.srv.Snapshot() {
		if k.Key == base || strings.HasPrefix(k.Key, base+":") {
			keys = append(keys, k.Key)
		}
	}
	return prefix, base, keys, nil
}

// remove deletes lock's keys and moves the server clock on by a
// millisecond. A fence is max(server µs, last fence + 1), and the last
// fence lives in the keys just deleted; a fence runs ahead of the clock
// only by the grants made within one microsecond, and the shim takes longer
// than that per script, so a millisecond later every new fence is above
// every old one, as on a real server where a lease ran out.
// It returns the prefix and the lock's wake channel.
func (l *Locker) remove(lock runtime.Lock) (prefix, wake string, err error) {
	fam, err := lockFamily(lock.Kind)
	if err != nil {
		return "", "", err
	}
	prefix, base, keys, err := l.lockKeys(lock, fam)
	if err != nil {
		return "", "", err
	}
	if _, err := l.srv.Do(append([]string{"DEL"}, keys...)...); err != nil {
		return "", "", fmt.Errorf("locktest: deleting %v: %w", keys, err)
	}
	l.clock.advance(time.Millisecond)
	return prefix, base + fam.Wake(), nil
}

// Expire ends lock now for everyone who holds it, as if its lease had run
// out without a renewal: its keys go from the server, its waiters are woken,
// and the holders in l have their contexts cancelled with
// runtime.ErrLockLost before Expire returns. The next grant's fence is
// above the lost one. lock names the lock as the holder took it (Kind and
// Key; Key is the rendered key). A NoRenew holder is not told, as in
// production: it learns of the end from its context's deadline. It returns
// an error wrapping runtime.ErrNotHeld if nobody holds lock.
func (l *Locker) Expire(lock runtime.Lock) error {
	_, wake, err := l.remove(lock)
	if err != nil {
		return err
	}
	if _, err := l.srv.Do(l.raw.PublishCommand(), wake, "all"); err != nil {
		return fmt.Errorf("locktest: waking the waiters: %w", err)
	}
	l.check()
	return nil
}

// Steal gives lock to another holder now, as when a holder paused longer
// than its lease and someone else took the lock meanwhile: the lock's keys
// go from the server, a holder outside l takes it (with a higher fence),
// and the holders in l have their contexts cancelled with
// runtime.ErrLockLost before Steal returns. It returns the new holder's
// Held: runtime.Fence(h.Context()) is its token; release it to let l's
// callers in again, or leave it to Close. It returns an error wrapping
// runtime.ErrNotHeld if nobody holds lock.
func (l *Locker) Steal(lock runtime.Lock) (*runtime.Held, error) {
	prefix, _, err := l.remove(lock)
	if err != nil {
		return nil, err
	}
	try := lock
	try.Wait = runtime.NoWait
	ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
	defer cancel()
	h, err := l.thief(prefix).Acquire(ctx, try)
	if err != nil {
		return nil, fmt.Errorf("locktest: stealing %s lock %q: %w", lock.Kind, lock.Key, err)
	}
	l.mu.Lock()
	l.stolen = append(l.stolen, h)
	l.mu.Unlock()
	l.check()
	return h, nil
}

// thief returns the Locker that steals locks under prefix: another
// process on the same server, without l's faults or observers.
func (l *Locker) thief(prefix string) *runtime.Locker {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.thieves[prefix]
	if t == nil {
		t = runtime.NewWithBackend(l.raw, runtime.WithKeyPrefix(prefix))
		l.thieves[prefix] = t
	}
	return t
}
