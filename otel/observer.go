package lockotel

import (
	"context"

	"github.com/lockgen/lockgen/runtime"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// scope names the instrumentation in the telemetry it produces.
const scope = "github.com/lockgen/lockgen/otel"

// Observer turns lock events into OpenTelemetry metrics and spans. Pass
// its Observe method to runtime.WithContextObserver. It is safe for
// concurrent use, as observers must be.
type Observer struct {
	tracer  trace.Tracer
	metrics *instruments
	withKey bool
}

// Option configures an Observer.
type Option func(*config)

type config struct {
	meters  metric.MeterProvider
	tracers trace.TracerProvider
	withKey bool
}

// WithMeterProvider sets where the metrics go (default: the global
// MeterProvider, otel.GetMeterProvider).
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) { c.meters = mp }
}

// WithTracerProvider sets where the spans go (default: the global
// TracerProvider, otel.GetTracerProvider).
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) { c.tracers = tp }
}

// WithKeyAttribute adds the rendered key ("order:42") to every metric
// point and span as lockgen.key. Off by default: one time series per key
// is a cardinality most metric back-ends do not survive. Turn it on for a
// bounded set of keys only.
func WithKeyAttribute() Option {
	return func(c *config) { c.withKey = true }
}

// New returns an Observer recording on the global providers, or on those
// the options name. It fails only if an instrument cannot be created.
func New(opts ...Option) (*Observer, error) {
	c := config{meters: otel.GetMeterProvider(), tracers: otel.GetTracerProvider()}
	for _, o := range opts {
		o(&c)
	}
	ins, err := newInstruments(c.meters.Meter(scope))
	if err != nil {
		return nil, err
	}
	return &Observer{tracer: c.tracers.Tracer(scope), metrics: ins, withKey: c.withKey}, nil
}

// Observe records e; ctx is the context of the lock's Acquire call (see
// runtime.ContextObserver), whose span is the parent of the acquire span
// and gets the loss and skip events.
func (o *Observer) Observe(ctx context.Context, e runtime.Event) {
	o.metrics.record(ctx, e, o.attributes(e))
	switch e.Kind {
	case runtime.EventAcquired, runtime.EventGaveUp:
		o.acquireSpan(ctx, e)
	case runtime.EventLost, runtime.EventSkipped:
		o.callerSpanEvent(ctx, e)
	}
}
