// Package base has an annotated method whose key reads an unexported field.
package base

import "context"

type Req struct{ id string }

type Ledger struct{}

//lock:mutex key=ledger:<r.id>
func (l *Ledger) Post(ctx context.Context, r Req) error { return nil }
