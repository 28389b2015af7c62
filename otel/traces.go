package lockotel

import (
	"context"
	"time"

	"github.com/lockgen/lockgen/runtime"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// acquireSpan records an acquire that ended (granted or given up) as a
// span, a child of the caller's, from the moment Acquire was called. It is
// made when the acquire ends, since only then are its outcome and fence
// known; the start time is put back by the wait.
func (o *Observer) acquireSpan(ctx context.Context, e runtime.Event) {
	end := time.Now()
	name := "lockgen acquire"
	if e.Lock.Method != "" {
		name += " " + e.Lock.Method
	}
	outcome := acquireOutcome(e)
	attrs := append(o.attributes(e),
		attrOutcome.String(outcome),
		attrWaited.Float64(e.Waited.Seconds()),
		attrHolder.String(e.Holder))
	if e.Kind == runtime.EventAcquired {
		attrs = append(attrs, attrFence.Int64(e.Fence))
	}
	_, span := o.tracer.Start(ctx, name,
		trace.WithTimestamp(end.Add(-e.Waited)),
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(attrs...))
	// Busy and canceled are answers the caller asked for (onbusy, a
	// deadline of its own); anything else is a failure of the acquire.
	if (outcome == outcomeError || outcome == outcomeTimeout) && e.Err != nil {
		span.RecordError(e.Err)
		span.SetStatus(codes.Error, e.Err.Error())
	}
	span.End(trace.WithTimestamp(end))
}

// callerSpanEvent adds a lost lock or a skipped call to the span of the
// call it happened to: for a loss, the caller's span is still open while
// the method runs under the lock. A loss carries its cause as
// exception.message; a skip is not an error and says only who was busy.
func (o *Observer) callerSpanEvent(ctx context.Context, e runtime.Event) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	attrs := o.attributes(e)
	if e.Kind == runtime.EventSkipped {
		if e.Err != nil {
			attrs = append(attrs, attrBusy.String(e.Err.Error()))
		}
		span.AddEvent("lockgen.skipped", trace.WithAttributes(attrs...))
		return
	}
	attrs = append(attrs, attrFence.Int64(e.Fence), attrHeld.Float64(e.Held.Seconds()), attrHolder.String(e.Holder))
	if e.Err != nil {
		attrs = append(attrs, attribute.String("exception.message", e.Err.Error()))
	}
	span.AddEvent("lockgen.lock_lost", trace.WithAttributes(attrs...))
}
