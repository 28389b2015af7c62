package lockotel_test

import (
	"context"
	"fmt"
	"slices"

	"github.com/lockgen/lockgen/embedded"
	lockotel "github.com/lockgen/lockgen/otel"
	"github.com/lockgen/lockgen/runtime"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// Wiring a Locker. A service passes no options: lockotel.New() records on
// the global providers its OpenTelemetry set-up installed. Here in-memory
// ones show what is recorded.
func Example() {
	reader := sdkmetric.NewManualReader()
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))

	obs, err := lockotel.New(lockotel.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))), lockotel.WithTracerProvider(tp))
	if err != nil {
		panic(err)
	}
	locker := embedded.New(runtime.WithContextObserver(obs.Observe)) // runtime.New(rdb, ...) with Redis
	defer locker.Close()

	// What a generated wrapper does for //lock:mutex key=order:<id>.
	ctx, request := tp.Tracer("shop").Start(context.Background(), "POST /orders/42/pay")
	held, err := locker.Acquire(ctx, runtime.Lock{Kind: runtime.Mutex, Key: "order:42", Method: "Orders.Pay", Template: "order:<id>"})
	if err != nil {
		panic(err)
	}
	_ = held.Release()
	request.End()

	for _, s := range spans.Ended() {
		fmt.Printf("span %q, child of the request: %v\n", s.Name(), s.Parent().SpanID() == request.SpanContext().SpanID())
	}
	var rm metricdata.ResourceMetrics
	_ = reader.Collect(context.Background(), &rm)
	var names []string
	for _, m := range rm.ScopeMetrics[0].Metrics {
		names = append(names, m.Name)
	}
	slices.Sort(names)
	fmt.Println("metrics:", names)
	// Output:
	// span "lockgen acquire Orders.Pay", child of the request: true
	// span "POST /orders/42/pay", child of the request: false
	// metrics: [lockgen.lock.acquired lockgen.lock.hold.duration lockgen.lock.wait.duration]
}
