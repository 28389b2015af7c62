package lockotel_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	lockotel "github.com/lockgen/lockgen/otel"
	"github.com/lockgen/lockgen/runtime"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// scrapeAfterEveryEvent runs an Observer behind the OpenTelemetry
// Prometheus exporter (its default naming, as a service would set it up),
// tells it one event of every kind the runtime has, each for a lock that
// names its method and key template, and returns the registry's scrape in
// Prometheus's text format: exactly the series a Prometheus would store.
func scrapeAfterEveryEvent(t *testing.T) string {
	t.Helper()
	reg := prometheus.NewRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		t.Fatal(err)
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	defer mp.Shutdown(context.Background())
	obs, err := lockotel.New(lockotel.WithMeterProvider(mp))
	if err != nil {
		t.Fatal(err)
	}
	lock := runtime.Lock{Kind: runtime.Mutex, Key: "order:42", Template: "order:<id>", Method: "Orders.Pay"}
	for _, e := range everyEvent(lock) {
		obs.Observe(context.Background(), e)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	enc := expfmt.NewEncoder(&text, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, f := range families {
		if err := enc.Encode(f); err != nil {
			t.Fatal(err)
		}
	}
	return text.String()
}

// everyEvent is one event of each kind the runtime reports, with every
// outcome an acquire or a hold can have, so that every instrument and
// every attribute the Observer records shows up in a scrape.
func everyEvent(lock runtime.Lock) []runtime.Event {
	busy := errors.Join(runtime.ErrNotAcquired)
	events := []runtime.Event{
		{Kind: runtime.EventAcquired, Waited: 3 * time.Millisecond},
		{Kind: runtime.EventBusy},
		{Kind: runtime.EventGaveUp, Waited: time.Second, Err: busy},
		{Kind: runtime.EventGaveUp, Err: context.Canceled},
		{Kind: runtime.EventGaveUp, Err: context.DeadlineExceeded},
		{Kind: runtime.EventRenewed},
		{Kind: runtime.EventLost, Err: runtime.ErrLockLost},
		{Kind: runtime.EventReleased, Held: 2 * time.Second},
		{Kind: runtime.EventReleased, Err: runtime.ErrNotHeld},
		{Kind: runtime.EventCleanedUp},
		{Kind: runtime.EventRetried, Err: errors.New("READONLY")},
	}
	for i := range events {
		events[i].Lock, events[i].Holder, events[i].Fence = lock, "h1", 7
	}
	// A skip names only the method, as Locker.SkipBusy reports it.
	skip := runtime.Event{Kind: runtime.EventSkipped, Lock: runtime.Lock{Method: lock.Method}, Err: busy}
	return append(events, skip)
}

// series maps each series name of a scrape (a histogram's _bucket, _sum
// and _count apart, as PromQL sees them) to the label names it carries.
type series map[string]map[string]bool

// parseScrape reads Prometheus's text format: a sample line is
// name{label="value",...} value. Label values may hold escaped quotes.
func parseScrape(t *testing.T, text string) series {
	t.Helper()
	out := series{}
	for _, line := range strings.Split(text, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		end := strings.IndexAny(line, "{ ")
		if end <= 0 {
			t.Fatalf("scrape line without a name: %q", line)
		}
		name := line[:end]
		if out[name] == nil {
			out[name] = map[string]bool{}
		}
		if line[end] != '{' {
			continue
		}
		labels, err := scrapeLabels(line[end+1:])
		if err != nil {
			t.Fatalf("scrape line %q: %v", line, err)
		}
		for _, l := range labels {
			out[name][l] = true
		}
	}
	return out
}

// scrapeLabels returns the label names of a sample line, read from just
// after its "{" up to the closing "}".
func scrapeLabels(s string) ([]string, error) {
	var names []string
	for {
		if strings.HasPrefix(s, "}") {
			return names, nil
		}
		name, rest, ok := strings.Cut(s, "=\"")
		if !ok {
			return nil, fmt.Errorf("no label at %q", s)
		}
		names = append(names, name)
		i := 0
		for ; i < len(rest) && rest[i] != '"'; i++ {
			if rest[i] == '\\' {
				i++ // an escaped character, perhaps a quote
			}
		}
		if i >= len(rest) {
			return nil, fmt.Errorf("unterminated value of %s", name)
		}
		s = strings.TrimPrefix(rest[i+1:], ",")
	}
}
