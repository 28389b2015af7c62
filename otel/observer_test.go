package lockotel_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lockgen/lockgen/embedded"
	lockotel "github.com/lockgen/lockgen/otel"
	"github.com/lockgen/lockgen/redistest"
	"github.com/lockgen/lockgen/runtime"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// telemetry is an Observer on in-memory exporters.
type telemetry struct {
	obs    *lockotel.Observer
	reader *sdkmetric.ManualReader
	spans  *tracetest.SpanRecorder
	tracer trace.Tracer // the test's own, for the callers' spans
}

func newTelemetry(t *testing.T, opts ...lockotel.Option) *telemetry {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	spans := tracetest.NewSpanRecorder()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	obs, err := lockotel.New(append([]lockotel.Option{lockotel.WithMeterProvider(mp), lockotel.WithTracerProvider(tp)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return &telemetry{obs: obs, reader: reader, spans: spans, tracer: tp.Tracer("test")}
}

// points returns the data points of the metric named name, each as its
// attributes and its value (a counter's sum, a histogram's count).
func (tm *telemetry) points(t *testing.T, name string) []point {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := tm.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var out []point
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, dp := range d.DataPoints {
					out = append(out, point{attrs: dp.Attributes, value: float64(dp.Value)})
				}
			case metricdata.Histogram[float64]:
				for _, dp := range d.DataPoints {
					out = append(out, point{attrs: dp.Attributes, value: float64(dp.Count), sum: dp.Sum})
				}
			}
		}
	}
	return out
}

type point struct {
	attrs attribute.Set
	value float64 // counter: the sum; histogram: the count
	sum   float64 // histogram: the sum
}

// total adds up the points of name whose attributes include every one of want.
func (tm *telemetry) total(t *testing.T, name string, want ...attribute.KeyValue) (value, sum float64) {
	t.Helper()
	for _, p := range tm.points(t, name) {
		if hasAll(p.attrs, want) {
			value += p.value
			sum += p.sum
		}
	}
	return value, sum
}

func hasAll(set attribute.Set, want []attribute.KeyValue) bool {
	for _, kv := range want {
		if v, ok := set.Value(kv.Key); !ok || v != kv.Value {
			return false
		}
	}
	return true
}

// ended returns the ended spans named name.
func (tm *telemetry) ended(name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range tm.spans.Ended() {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

func spanAttr(s sdktrace.ReadOnlySpan, key attribute.Key) (attribute.Value, bool) {
	for _, kv := range s.Attributes() {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

// backend is a place locks live: newLocker makes Lockers sharing one
// keyspace, del deletes a key behind their back (a lock stolen or expired).
type backend struct {
	newLocker func(t *testing.T, opts ...runtime.Option) *runtime.Locker
	del       func(t *testing.T, key string)
}

// forEachBackend runs f on the embedded backend and on a real redis-server.
func forEachBackend(t *testing.T, f func(t *testing.T, b backend)) {
	t.Run("embedded", func(t *testing.T) {
		eb := embedded.NewBackend(nil)
		f(t, backend{
			newLocker: func(t *testing.T, opts ...runtime.Option) *runtime.Locker {
				l := runtime.NewWithBackend(eb, opts...)
				t.Cleanup(func() { l.Close() })
				return l
			},
			del: func(t *testing.T, key string) {
				if _, err := eb.Server().Do("DEL", key); err != nil {
					t.Fatal(err)
				}
			},
		})
	})
	t.Run("redis", func(t *testing.T) {
		srv := redistest.Start(t)
		rdb := redis.NewClient(srv.Options())
		t.Cleanup(func() { rdb.Close() })
		f(t, backend{
			newLocker: func(t *testing.T, opts ...runtime.Option) *runtime.Locker {
				l := runtime.New(rdb, opts...)
				t.Cleanup(func() { l.Close() })
				return l
			},
			del: func(t *testing.T, key string) {
				if err := rdb.Del(context.Background(), key).Err(); err != nil {
					t.Fatal(err)
				}
			},
		})
	})
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

var (
	kindMutex = attribute.String("lockgen.lock.kind", "mutex")
	methodPay = attribute.String("lockgen.method", "Orders.Pay")
	tmplOrder = attribute.String("lockgen.key.template", "order:<id>")
)

func outcome(s string) attribute.KeyValue { return attribute.String("lockgen.outcome", s) }

func payLock(id string) runtime.Lock {
	return runtime.Lock{Kind: runtime.Mutex, Key: "order:" + id, Method: "Orders.Pay", Template: "order:<id>"}
}

// A granted acquire is a span under the caller's, with its fence and
// outcome, and counts in the acquire and wait metrics; its release counts
// in the hold histogram; no metric carries the rendered key.
func TestAcquireIsAChildSpanAndCounts(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		tm := newTelemetry(t)
		l := b.newLocker(t, runtime.WithContextObserver(tm.obs.Observe))
		ctx, request := tm.tracer.Start(testCtx(t), "request")
		asked := time.Now()
		held, err := l.Acquire(ctx, payLock("42"))
		if err != nil {
			t.Fatal(err)
		}
		fence, _ := runtime.Fence(held.Context())
		if err := held.Release(); err != nil {
			t.Fatal(err)
		}
		heldFor := time.Since(asked) // at most: the grant came after it
		request.End()

		spans := tm.ended("lockgen acquire Orders.Pay")
		if len(spans) != 1 {
			t.Fatalf("%d acquire spans, want 1", len(spans))
		}
		s := spans[0]
		if s.Parent().SpanID() != request.SpanContext().SpanID() || s.SpanContext().TraceID() != request.SpanContext().TraceID() {
			t.Errorf("acquire span's parent %v in trace %v, want the request span %v", s.Parent().SpanID(), s.SpanContext().TraceID(), request.SpanContext().SpanID())
		}
		if v, _ := spanAttr(s, "lockgen.fence"); v.AsInt64() != fence || fence == 0 {
			t.Errorf("span fence %v, want the holder's %d", v.Emit(), fence)
		}
		if v, _ := spanAttr(s, "lockgen.outcome"); v.AsString() != "acquired" {
			t.Errorf("span outcome %q, want acquired", v.Emit())
		}
		if _, ok := spanAttr(s, "lockgen.wait.seconds"); !ok {
			t.Error("span has no wait")
		}
		if _, ok := spanAttr(s, "lockgen.key"); ok {
			t.Error("span carries the rendered key without WithKeyAttribute")
		}

		if n, _ := tm.total(t, "lockgen.lock.acquired", kindMutex, methodPay, tmplOrder); n != 1 {
			t.Errorf("acquired counter %v, want 1", n)
		}
		if n, _ := tm.total(t, "lockgen.lock.wait.duration", outcome("acquired"), methodPay); n != 1 {
			t.Errorf("wait histogram has %v acquired points, want 1", n)
		}
		n, sum := tm.total(t, "lockgen.lock.hold.duration", outcome("released"), methodPay, tmplOrder)
		if n != 1 || sum <= 0 || sum > heldFor.Seconds() {
			t.Errorf("hold histogram: %v released, sum %vs; want 1, within the %v it was held", n, sum, heldFor)
		}
		for _, name := range []string{"lockgen.lock.acquired", "lockgen.lock.wait.duration", "lockgen.lock.hold.duration"} {
			for _, p := range tm.points(t, name) {
				if _, ok := p.attrs.Value("lockgen.key"); ok {
					t.Errorf("%s carries the rendered key by default", name)
				}
			}
		}
	})
}

// An acquire that finds the lock busy and gives up is a span with outcome
// busy and counts as busy and gave-up; a skipped onbusy=skip call counts
// and marks the caller's span.
func TestBusyGaveUpAndSkipped(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		tm := newTelemetry(t)
		other := b.newLocker(t)
		l := b.newLocker(t, runtime.WithContextObserver(tm.obs.Observe))
		first, err := other.Acquire(testCtx(t), payLock("7"))
		if err != nil {
			t.Fatal(err)
		}
		defer first.Release()

		ctx, request := tm.tracer.Start(testCtx(t), "nightly")
		lock := payLock("7")
		lock.Wait = runtime.NoWait
		_, err = l.Acquire(ctx, lock)
		if !errors.Is(err, runtime.ErrNotAcquired) {
			t.Fatalf("Acquire: %v, want ErrNotAcquired", err)
		}
		if !l.SkipBusy(ctx, "Orders.Pay", err) {
			t.Fatal("SkipBusy did not take a busy error")
		}
		request.End()

		spans := tm.ended("lockgen acquire Orders.Pay")
		if len(spans) != 1 {
			t.Fatalf("%d acquire spans, want 1", len(spans))
		}
		if v, _ := spanAttr(spans[0], "lockgen.outcome"); v.AsString() != "busy" {
			t.Errorf("span outcome %q, want busy", v.Emit())
		}
		if n, _ := tm.total(t, "lockgen.lock.gave_up", outcome("busy"), kindMutex, methodPay); n != 1 {
			t.Errorf("gave_up{outcome=busy} %v, want 1", n)
		}
		if n, _ := tm.total(t, "lockgen.lock.busy", methodPay); n < 1 {
			t.Errorf("busy counter %v, want at least 1", n)
		}
		if n, _ := tm.total(t, "lockgen.lock.wait.duration", outcome("busy")); n != 1 {
			t.Errorf("wait histogram has %v busy points, want 1", n)
		}
		// A caller's deadline that ends the wait is a failed acquire.
		short, cancel := context.WithTimeout(testCtx(t), 100*time.Millisecond)
		defer cancel()
		if _, err := l.Acquire(short, payLock("7")); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Acquire with a deadline: %v, want DeadlineExceeded", err)
		}
		spans = tm.ended("lockgen acquire Orders.Pay")
		if len(spans) != 2 {
			t.Fatalf("%d acquire spans, want 2", len(spans))
		}
		if v, _ := spanAttr(spans[1], "lockgen.outcome"); v.AsString() != "timeout" || spans[1].Status().Code != codes.Error {
			t.Errorf("deadline span: outcome %q status %v, want timeout and Error", v.Emit(), spans[1].Status())
		}
		if spans[0].Status().Code == codes.Error {
			t.Error("a busy lock the caller chose not to wait for marks its span as an error")
		}
		if n, _ := tm.total(t, "lockgen.call.skipped", methodPay); n != 1 {
			t.Errorf("skipped counter %v, want 1", n)
		}
		parent := tm.ended("nightly")
		if len(parent) != 1 || !hasEvent(parent[0], "lockgen.skipped") {
			t.Fatal("the caller's span has no lockgen.skipped event")
		}
		checkSkipIsNoError(t, parent[0])
	})
}

// checkSkipIsNoError checks that a skip is recorded as what it is, an answer
// the caller asked for: no exception attribute or event, no Error status,
// and the holder that was busy named in lockgen.busy.
func checkSkipIsNoError(t *testing.T, s sdktrace.ReadOnlySpan) {
	t.Helper()
	if s.Status().Code == codes.Error {
		t.Errorf("a skipped call marks its caller's span as an error: %v", s.Status())
	}
	for _, ev := range s.Events() {
		if ev.Name == "exception" {
			t.Errorf("a skipped call recorded an exception event: %v", ev.Attributes)
		}
		if ev.Name != "lockgen.skipped" {
			continue
		}
		busy := ""
		for _, a := range ev.Attributes {
			if strings.HasPrefix(string(a.Key), "exception.") {
				t.Errorf("the skipped event carries %s=%q: a skip is not an error", a.Key, a.Value.Emit())
			}
			if a.Key == "lockgen.busy" {
				busy = a.Value.AsString()
			}
		}
		if !strings.Contains(busy, "busy") {
			t.Errorf("the skipped event's lockgen.busy is %q, want the busy error's text", busy)
		}
	}
}

func hasEvent(s sdktrace.ReadOnlySpan, name string) bool {
	for _, e := range s.Events() {
		if e.Name == name {
			return true
		}
	}
	return false
}

// A lock lost while held is an event on the caller's span, which is still
// open, and counts as lost; its release counts in the hold histogram as
// lost. Renewals before it count as renewed.
func TestLossMarksTheCallersSpan(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		tm := newTelemetry(t)
		renewed, lost := make(chan struct{}, 16), make(chan struct{}, 1)
		signal := func(_ context.Context, e runtime.Event) { // after tm.obs: it has recorded e
			ch := map[runtime.EventKind]chan struct{}{runtime.EventRenewed: renewed, runtime.EventLost: lost}[e.Kind]
			if ch != nil {
				select {
				case ch <- struct{}{}:
				default:
				}
			}
		}
		l := b.newLocker(t, runtime.WithContextObserver(tm.obs.Observe), runtime.WithContextObserver(signal))
		ctx, request := tm.tracer.Start(testCtx(t), "request")
		lock := payLock("9")
		lock.Lease = 300 * time.Millisecond
		held, err := l.Acquire(ctx, lock)
		if err != nil {
			t.Fatal(err)
		}
		fence, _ := runtime.Fence(held.Context())
		waitFor(t, renewed, "a renewal")
		b.del(t, "lockgen:mutex:{order:9}")
		waitFor(t, lost, "the loss")
		if err := held.Release(); !errors.Is(err, runtime.ErrNotHeld) {
			t.Errorf("Release after the loss: %v, want ErrNotHeld", err)
		}
		request.End()

		parent := tm.ended("request")
		if len(parent) != 1 {
			t.Fatalf("%d request spans", len(parent))
		}
		var found bool
		for _, e := range parent[0].Events() {
			if e.Name != "lockgen.lock_lost" {
				continue
			}
			found = true
			if !hasAll(attribute.NewSet(e.Attributes...), []attribute.KeyValue{attribute.Int64("lockgen.fence", fence), methodPay}) {
				t.Errorf("loss event attributes %v, want fence %d and the method", e.Attributes, fence)
			}
		}
		if !found {
			t.Error("the caller's span has no lockgen.lock_lost event")
		}
		if n, _ := tm.total(t, "lockgen.lock.lost", kindMutex, methodPay, tmplOrder); n != 1 {
			t.Errorf("lost counter %v, want 1", n)
		}
		if n, _ := tm.total(t, "lockgen.lock.renewed", methodPay); n < 1 {
			t.Errorf("renewed counter %v, want at least 1", n)
		}
		if n, _ := tm.total(t, "lockgen.lock.hold.duration", outcome("lost"), methodPay); n != 1 {
			t.Errorf("hold histogram has %v lost points, want 1", n)
		}
	})
}

func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(20 * time.Second):
		t.Fatalf("no %s within 20s", what)
	}
}

// WithKeyAttribute adds the rendered key, for those who want it.
func TestKeyAttributeIsOptIn(t *testing.T) {
	tm := newTelemetry(t, lockotel.WithKeyAttribute())
	l := embedded.New(runtime.WithContextObserver(tm.obs.Observe))
	defer l.Close()
	held, err := l.Acquire(testCtx(t), payLock("42"))
	if err != nil {
		t.Fatal(err)
	}
	_ = held.Release()
	if n, _ := tm.total(t, "lockgen.lock.acquired", attribute.String("lockgen.key", "order:42"), methodPay); n != 1 {
		t.Errorf("acquired{lockgen.key=order:42} %v, want 1", n)
	}
	if v, ok := spanAttr(tm.ended("lockgen acquire Orders.Pay")[0], "lockgen.key"); !ok || v.AsString() != "order:42" {
		t.Errorf("span key %q, want order:42", v.Emit())
	}
}
