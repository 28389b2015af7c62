// Package kinderrors locks keys with kinds that never exclude each other:
// each kind keeps its own Redis keys.
package kinderrors

import "context"

type Orders struct{}

//lock:mutex key=order:<id>
func (o *Orders) Cancel(ctx context.Context, id string) error { return nil }

// Pay uses another kind on the same key: it could run during Cancel.
//
//lock:fair key=order:<id>
func (o *Orders) Pay(ctx context.Context, id string) error { return nil }

// Refund's template differs but renders the same keys (order:42).
//
//lock:write key=order:<n>
func (o *Orders) Refund(ctx context.Context, n int64) error { return nil }

// Audit reads a key only a mutex takes.
//
//lock:read key=order:42
func (o *Orders) Audit(ctx context.Context) error { return nil }

//lock:semaphore key=export:<tenant> permits=3
func (o *Orders) Export(ctx context.Context, tenant string) error { return nil }

//lock:semaphore key=export:<tenant> permits=1
func (o *Orders) ExportOne(ctx context.Context, tenant string) error { return nil }

//lock:mutex key=export:<tenant>
func (o *Orders) Purge(ctx context.Context, tenant string) error { return nil }

// These are fine: read and write share a key; order:<t>:<id> can never
// render the same key as order:<id> (values never contain ':').

//lock:read key=shipment:<id>
func (o *Orders) Track(ctx context.Context, id string) error { return nil }

//lock:write key=shipment:<id>
func (o *Orders) Ship(ctx context.Context, id string) error { return nil }

//lock:fair key=order:<tenant>:<id>
func (o *Orders) Tenant(ctx context.Context, tenant, id string) error { return nil }
