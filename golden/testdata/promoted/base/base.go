// Package base declares annotated types that package promoted embeds.
package base

import "context"

type Ledger struct{}

// Post posts an entry.
//
//lock:mutex key=ledger:<account>
func (l *Ledger) Post(ctx context.Context, account string, cents int64) error { return nil }

// Balance is not annotated: it delegates.
func (l *Ledger) Balance(account string) int64 { return 0 }

//lock:mutex key=ledger:internal
func (l *Ledger) internal(ctx context.Context) error { return nil }

type Auditor interface {
	//lock:read key=audit:<id>
	Audit(ctx context.Context, id int) error
}
