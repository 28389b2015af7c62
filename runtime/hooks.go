package runtime

import (
	"context"
	"log/slog"
	"time"
)

// EventKind says what happened to a lock.
type EventKind uint8

const (
	// EventAcquired: the lock was granted; Event.Waited is the time since
	// Acquire was called.
	EventAcquired EventKind = iota + 1
	// EventBusy: an acquire attempt found the lock busy; Event.Waited is how
	// long the script said to wait at most before trying again.
	EventBusy
	// EventGaveUp: the wait ended without the lock (wait exhausted, try once,
	// context done); Event.Err says why, Event.Waited how long it waited.
	EventGaveUp
	// EventRenewed: the watchdog extended the lease.
	EventRenewed
	// EventLost: the lock was lost while held; Event.Err is the cause given
	// to the holder's context, Event.Held how long it had been held.
	EventLost
	// EventReleased: the lock was given back; Event.Held is the hold time,
	// Event.Err the release error if there was one. The release of a
	// re-entry (a nested Acquire of a lock its call chain holds) reports
	// nothing, as its Acquire did not: the hold is given back, once, by the
	// last of them.
	EventReleased
	// EventCleanedUp: the background clean-up of a holder id has ended. It
	// runs after a call whose outcome is unknown (an acquire or release that
	// timed out or lost its connection, a WAIT that failed) and after a
	// waiter gave up while registered in Redis, and gives back whatever the
	// holder id may have taken or registered. Event.Err is nil once Redis
	// confirmed that nothing of the holder id is left on the lock, and says
	// why otherwise (it gave up when the lease would have ended anyway, or
	// the Locker was closed).
	EventCleanedUp
	// EventSkipped: a method annotated onbusy=skip found its lock busy and
	// returned without running (Locker.SkipBusy). Event.Lock has only
	// Method set; Event.Err is the busy error, which names the lock.
	EventSkipped
	// EventRetried: an acquire attempt failed with a transient error (a
	// failover, a restart: connection refused or reset, READONLY, LOADING,
	// ...) while the wait had time left; the waiter gave back whatever the
	// attempt may have taken and tries again after a short backoff.
	// Event.Err is the error, Event.Waited the time since Acquire was called.
	EventRetried
)

func (k EventKind) String() string {
	switch k {
	case EventAcquired:
		return "acquired"
	case EventBusy:
		return "busy"
	case EventGaveUp:
		return "gave_up"
	case EventRenewed:
		return "renewed"
	case EventLost:
		return "lost"
	case EventReleased:
		return "released"
	case EventCleanedUp:
		return "cleaned_up"
	case EventSkipped:
		return "skipped"
	case EventRetried:
		return "retried"
	}
	return "unknown"
}

// Event is what an Observer is told.
type Event struct {
	Kind   EventKind
	Lock   Lock   // the lock as asked for (Lease filled in with the default)
	Holder string // holder id used in Redis
	Fence  int64  // fencing token (Acquired, Renewed, Lost, Released)
	Waited time.Duration
	// Held is how long the lock was held (Lost, Released): from the moment
	// this process learnt it was granted, so a wait for a hand-over does
	// not count.
	Held time.Duration
	Err  error
}

// LogValue makes an Event print as a group of attributes with log/slog.
func (e Event) LogValue() slog.Value {
	attrs := []slog.Attr{slog.String("event", e.Kind.String())}
	if e.Lock.Kind != 0 { // a skip names only the method
		attrs = append(attrs, slog.String("kind", e.Lock.Kind.String()), slog.String("key", e.Lock.Key))
	}
	if e.Holder != "" {
		attrs = append(attrs, slog.String("holder", e.Holder))
	}
	if e.Lock.Method != "" {
		attrs = append(attrs, slog.String("method", e.Lock.Method))
	}
	if e.Lock.Template != "" {
		attrs = append(attrs, slog.String("template", e.Lock.Template))
	}
	if e.Fence != 0 {
		attrs = append(attrs, slog.Int64("fence", e.Fence))
	}
	if e.Waited != 0 {
		attrs = append(attrs, slog.Duration("waited", e.Waited))
	}
	if e.Held != 0 {
		attrs = append(attrs, slog.Duration("held", e.Held))
	}
	if e.Err != nil {
		attrs = append(attrs, slog.String("err", e.Err.Error()))
	}
	return slog.GroupValue(attrs...)
}

// Observer is told about every lock event. It is called synchronously from
// the goroutine that saw the event (the acquiring or releasing goroutine, or
// the watchdog), so it must be quick and must not call the Locker.
type Observer func(Event)

// ContextObserver is an Observer that also gets the context of the call
// the event belongs to, for tracing: the context given to Acquire for
// Acquired, Busy, GaveUp, Released, Renewed and Lost (so a span in it is
// the caller's, and still open while the lock is held), the one given to
// SkipBusy for Skipped, and context.Background() for CleanedUp, which runs
// after the caller has returned. The same rules as for an Observer apply.
type ContextObserver func(context.Context, Event)

// SlogObserver logs events to logger: lost locks and failed releases at
// Warn, acquisitions, releases and skipped calls at Info, busy, gave-up and
// renewed at Debug.
func SlogObserver(logger *slog.Logger) Observer {
	return func(e Event) {
		level := slog.LevelDebug
		switch e.Kind {
		case EventAcquired, EventReleased, EventSkipped:
			level = slog.LevelInfo
		case EventLost:
			level = slog.LevelWarn
		}
		if (e.Kind == EventReleased || e.Kind == EventCleanedUp) && e.Err != nil {
			level = slog.LevelWarn
		}
		logger.LogAttrs(context.Background(), level, "lockgen "+e.Kind.String(), slog.Any("lock", e))
	}
}

// observed reports whether anyone observes events: the hot path builds
// them, and reads the clock for them, only then.
func (l *Locker) observed() bool { return len(l.observers) > 0 }

// observe tells every observer about e, which happened to the call of ctx.
func (l *Locker) observe(ctx context.Context, e Event) {
	for _, o := range l.observers {
		o(ctx, e)
	}
}
