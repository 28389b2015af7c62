package runtime

import (
	"fmt"
	"time"
)

// BusyError is the error of an Acquire that did not get a lock because
// another holder had it, when Redis said who: errors.As finds it, and it
// wraps ErrNotAcquired. Holder is that holder's id (the default ids say
// which host and process: "<host>:<pid>:..."); LeaseLeft is what was left
// of its lease at the last busy reply, 0 when the reply did not say (a
// mutex waiter's registration does not read it).
type BusyError struct {
	Holder    string
	LeaseLeft time.Duration
	err       error
}

func (e *BusyError) Error() string {
	if e.LeaseLeft > 0 {
		return fmt.Sprintf("%v: held by %s, lease left %v", e.err, e.Holder, e.LeaseLeft)
	}
	return fmt.Sprintf("%v: held by %s", e.err, e.Holder)
}

// Unwrap returns the error it explains, which wraps ErrNotAcquired.
func (e *BusyError) Unwrap() error { return e.err }

// busyHolder is what a busy acquire reply said of the holder: its id
// ("" when the reply named none: readers, semaphore permits, a waiting
// writer) and what was left of its lease (0: not said).
type busyHolder struct {
	id   string
	left time.Duration
	// serverNow is the server clock (ms) the busy reply said, 0 if none:
	// for a fair waiter's heartbeats (internal/watchdog, heartbeat.go).
	serverNow int64
}

// explain returns err, which wraps ErrNotAcquired, as a *BusyError naming
// the holder, or err itself when no busy reply named one.
func (b busyHolder) explain(err error) error {
	if b.id == "" {
		return err
	}
	return &BusyError{Holder: b.id, LeaseLeft: b.left, err: err}
}
