package lockotel

import (
	"context"
	"errors"

	"github.com/lockgen/lockgen/runtime"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// instruments are the metrics an Observer records.
type instruments struct {
	wait     metric.Float64Histogram // acquires, by outcome: how long the caller waited
	hold     metric.Float64Histogram // releases, by outcome: from the grant to the release
	acquired metric.Int64Counter
	busy     metric.Int64Counter // busy replies, one per attempt that found the lock taken
	gaveUp   metric.Int64Counter // acquires that ended without the lock, by outcome
	lost     metric.Int64Counter
	renewed  metric.Int64Counter
	skipped  metric.Int64Counter // onbusy=skip calls that did not run
}

// durationBuckets (seconds) span a fast uncontended acquire to a job that
// holds its lock for minutes; the SDK's default buckets assume
// milliseconds.
var durationBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300}

func newInstruments(m metric.Meter) (*instruments, error) {
	var ins instruments
	var errs [8]error
	ins.wait, errs[0] = m.Float64Histogram("lockgen.lock.wait.duration", metric.WithUnit("s"),
		metric.WithDescription("How long Acquire waited for a lock, by outcome."), metric.WithExplicitBucketBoundaries(durationBuckets...))
	ins.hold, errs[1] = m.Float64Histogram("lockgen.lock.hold.duration", metric.WithUnit("s"),
		metric.WithDescription("How long a lock was held, from its grant to its release, by outcome."), metric.WithExplicitBucketBoundaries(durationBuckets...))
	ins.acquired, errs[2] = m.Int64Counter("lockgen.lock.acquired", metric.WithUnit("{lock}"),
		metric.WithDescription("Locks granted."))
	ins.busy, errs[3] = m.Int64Counter("lockgen.lock.busy", metric.WithUnit("{attempt}"),
		metric.WithDescription("Acquire attempts that found the lock taken."))
	ins.gaveUp, errs[4] = m.Int64Counter("lockgen.lock.gave_up", metric.WithUnit("{lock}"),
		metric.WithDescription("Acquires that ended without the lock, by outcome."))
	ins.lost, errs[5] = m.Int64Counter("lockgen.lock.lost", metric.WithUnit("{lock}"),
		metric.WithDescription("Locks lost while held: renewal refused, or Redis unreachable past the lease."))
	ins.renewed, errs[6] = m.Int64Counter("lockgen.lock.renewed", metric.WithUnit("{renewal}"),
		metric.WithDescription("Lease renewals by the watchdog."))
	ins.skipped, errs[7] = m.Int64Counter("lockgen.call.skipped", metric.WithUnit("{call}"),
		metric.WithDescription("Calls of onbusy=skip methods that did not run because a lock was busy."))
	if err := errors.Join(errs[:]...); err != nil {
		return nil, err
	}
	return &ins, nil
}

// record adds e to the metrics; attrs name its lock.
func (ins *instruments) record(ctx context.Context, e runtime.Event, attrs []attribute.KeyValue) {
	set := metric.WithAttributes(attrs...)
	switch e.Kind {
	case runtime.EventAcquired:
		ins.acquired.Add(ctx, 1, set)
		ins.wait.Record(ctx, e.Waited.Seconds(), withOutcome(attrs, outcomeAcquired))
	case runtime.EventGaveUp:
		outcome := withOutcome(attrs, acquireOutcome(e))
		ins.gaveUp.Add(ctx, 1, outcome)
		ins.wait.Record(ctx, e.Waited.Seconds(), outcome)
	case runtime.EventBusy:
		ins.busy.Add(ctx, 1, set)
	case runtime.EventReleased:
		ins.hold.Record(ctx, e.Held.Seconds(), withOutcome(attrs, releaseOutcome(e)))
	case runtime.EventLost:
		ins.lost.Add(ctx, 1, set)
	case runtime.EventRenewed:
		ins.renewed.Add(ctx, 1, set)
	case runtime.EventSkipped:
		ins.skipped.Add(ctx, 1, set)
	}
}

// withOutcome is attrs and the outcome, as a measurement option. attrs is
// not changed: it is shared by the caller.
func withOutcome(attrs []attribute.KeyValue, outcome string) metric.MeasurementOption {
	all := make([]attribute.KeyValue, 0, len(attrs)+1)
	return metric.WithAttributes(append(append(all, attrs...), attrOutcome.String(outcome))...)
}
