package lockorder

import "context"

// Ledger is decorated by NewLedgerLocked: calls through it take its locks.
type Ledger interface {
	//lock:write key=ledger:<account>
	Post(ctx context.Context, account string) error
}

// Accounts, Auditor and Stock take three locks around a cycle: account,
// then ledger; ledger, then stock; stock, then account.
type Accounts struct {
	ledger Ledger
}

// Close holds the account, then posts to its ledger.
//
//lock:mutex key=account:<id>
func (a *Accounts) Close(ctx context.Context, id string) error {
	return a.ledger.Post(ctx, id)
}

// Touch takes the account lock.
//
//lock:mutex key=account:<id>
func (a *Accounts) Touch(ctx context.Context, id string) error { return nil }

type Auditor struct {
	stock *StockLocked
}

// Audit reads the ledger, then counts stock (deferred calls run before the
// wrapper releases, so they count).
//
//lock:read key=ledger:<account>
func (x *Auditor) Audit(ctx context.Context, account, sku string) error {
	defer x.stock.Count(ctx, sku)
	return nil
}

type Stock struct {
	accounts *AccountsLocked
}

// Count takes the stock lock.
//
//lock:mutex key=stock:<sku>
func (s *Stock) Count(ctx context.Context, sku string) error { return nil }

// Restock holds the stock, then touches an account.
//
//lock:mutex key=stock:<sku>
func (s *Stock) Restock(ctx context.Context, sku, account string) error {
	return s.accounts.Touch(ctx, account)
}
