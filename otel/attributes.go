package lockotel

import (
	"context"
	"errors"

	"github.com/lockgen/lockgen/runtime"
	"go.opentelemetry.io/otel/attribute"
)

// Attribute keys. The lock is named by its kind, the generated method and
// its key template, which are few; the rendered key only with
// WithKeyAttribute.
const (
	attrKind     = attribute.Key("lockgen.lock.kind")
	attrMethod   = attribute.Key("lockgen.method")
	attrTemplate = attribute.Key("lockgen.key.template")
	attrKey      = attribute.Key("lockgen.key")
	attrOutcome  = attribute.Key("lockgen.outcome")
	attrFence    = attribute.Key("lockgen.fence")
	attrHolder   = attribute.Key("lockgen.holder")
	attrWaited   = attribute.Key("lockgen.wait.seconds")
	attrHeld     = attribute.Key("lockgen.hold.seconds")
	// attrBusy says who held the lock a skipped call found busy (the busy
	// error's text). Not exception.message: a skip is an answer the caller
	// asked for (onbusy=skip), not a failure, and backends count and show
	// exception attributes as errors.
	attrBusy = attribute.Key("lockgen.busy")
)

// attributes names e's lock with low cardinality.
func (o *Observer) attributes(e runtime.Event) []attribute.KeyValue {
	attrs := make([]attribute.KeyValue, 0, 5)
	if e.Lock.Kind != 0 { // a skip names only the method
		attrs = append(attrs, attrKind.String(e.Lock.Kind.String()))
	}
	if e.Lock.Method != "" {
		attrs = append(attrs, attrMethod.String(e.Lock.Method))
	}
	if e.Lock.Template != "" {
		attrs = append(attrs, attrTemplate.String(e.Lock.Template))
	}
	if o.withKey && e.Lock.Key != "" {
		attrs = append(attrs, attrKey.String(e.Lock.Key))
	}
	return attrs
}

// Outcomes, the lockgen.outcome attribute.
const (
	outcomeAcquired = "acquired"
	outcomeBusy     = "busy"     // the lock stayed busy for the whole wait
	outcomeCanceled = "canceled" // the caller's context ended the wait
	outcomeTimeout  = "timeout"  // a deadline ended it: the context's, or no reply from Redis in time
	outcomeReleased = "released"
	outcomeLost     = "lost"  // released after the lease had run out or the lock was taken
	outcomeError    = "error" // anything else: a Redis error, a closed Locker, ...
)

// acquireOutcome says how an acquire ended.
func acquireOutcome(e runtime.Event) string {
	switch {
	case e.Kind == runtime.EventAcquired:
		return outcomeAcquired
	case errors.Is(e.Err, runtime.ErrNotAcquired):
		return outcomeBusy
	case errors.Is(e.Err, context.Canceled):
		return outcomeCanceled
	case errors.Is(e.Err, context.DeadlineExceeded):
		return outcomeTimeout
	}
	return outcomeError
}

// releaseOutcome says how a hold ended.
func releaseOutcome(e runtime.Event) string {
	switch {
	case e.Err == nil:
		return outcomeReleased
	case errors.Is(e.Err, runtime.ErrNotHeld), errors.Is(e.Err, runtime.ErrLockLost):
		return outcomeLost
	}
	return outcomeError
}
