package runtime

import "context"

// RenewNow renews every lock l holds at once, instead of at its next due
// time, and returns once the replies are applied: a lock that Redis no
// longer holds for its holder has had its holders' contexts cancelled with
// ErrLockLost by then. Locks already being renewed are left to that call.
//
// The watchdog does this by itself about every lease/3; RenewNow is for
// tests (package locktest takes a lock away and calls it, so the holder
// hears of the loss at once) and for code that has reason to believe a lock
// may be gone. A lock whose acquire was in flight during RenewNow is
// renewed as soon as its acquire returns. It returns ErrClosed after
// Close, else ctx's error if ctx ended first (a renewal that failed is
// retried by the watchdog as usual).
func (l *Locker) RenewNow(ctx context.Context) error {
	return l.dog.RenewNow(ctx)
}
