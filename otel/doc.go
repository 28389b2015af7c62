// Package lockotel reports lockgen's locks to OpenTelemetry: metrics, and
// a span for every acquire. Its import path is
// github.com/lockgen/lockgen/otel, a module of its own, so that the core
// module does not depend on OpenTelemetry; it is named lockotel so that it
// does not shadow go.opentelemetry.io/otel.
//
// Wiring a service, with the providers the OpenTelemetry set-up installed
// globally:
//
//	obs, err := lockotel.New()
//	if err != nil {
//		return err
//	}
//	locker := runtime.New(rdb, runtime.WithContextObserver(obs.Observe))
//
// # Metrics
//
//   - lockgen.lock.wait.duration (histogram, s): how long Acquire waited,
//     by lockgen.outcome: acquired, busy, canceled, timeout, error.
//   - lockgen.lock.hold.duration (histogram, s): from the grant to the
//     release, by lockgen.outcome: released, lost (the lease had run out or
//     the lock was taken), error.
//   - lockgen.lock.acquired, lockgen.lock.busy (per attempt that found
//     the lock taken), lockgen.lock.gave_up (by outcome), lockgen.lock.lost,
//     lockgen.lock.renewed, lockgen.call.skipped (onbusy=skip calls that did
//     not run): counters.
//
// Every point carries lockgen.lock.kind, and lockgen.method and
// lockgen.key.template when the lock names them (generated code always
// does). The rendered key is left out, since one time series per key
// overwhelms a metric back-end; WithKeyAttribute adds it as lockgen.key.
//
// Exported to Prometheus by the OpenTelemetry Prometheus exporter (default
// naming), they are lockgen_lock_wait_duration_seconds and
// lockgen_lock_hold_duration_seconds (_bucket, _sum, _count),
// lockgen_lock_acquired_total, lockgen_lock_busy_total,
// lockgen_lock_gave_up_total, lockgen_lock_lost_total,
// lockgen_lock_renewed_total and lockgen_call_skipped_total, with labels
// lockgen_lock_kind, lockgen_method, lockgen_key_template and
// lockgen_outcome. dashboards/lockgen.json in this module is a Grafana
// dashboard of them (waits, holds, busy, lost, skipped, by method and key
// template); TestDashboardMatchesExportedMetrics checks every name its
// queries use against a scrape of the real exporter.
//
// # Traces
//
// Every acquire, granted or not, is a span "lockgen acquire <Type.Method>",
// a child of the span in the context given to Acquire, starting when
// Acquire was called, with the outcome, the wait, the holder id and the
// fencing token as attributes. A lock lost while held adds an event
// lockgen.lock_lost to that caller's span, which is still open while the
// method runs, with the cause as exception.message; a skipped onbusy=skip
// call adds lockgen.skipped, with the busy lock's holder in lockgen.busy
// and nothing that marks it as an error: skipping is what the caller asked
// for.
package lockotel
