// Package lockorderfine nests locks in ways that look like a lock-order
// cycle but are not one; lockgen generates without complaint.
package lockorderfine

import (
	"context"

	"github.com/lockgen/lockgen/runtime"
)

type Service struct {
	self *ServiceLocked
}

func New(l *runtime.Locker) *ServiceLocked {
	s := &Service{}
	s.self = NewServiceLocked(s, l)
	return s.self
}

// Pay takes the order lock.
//
//lock:mutex key=order:<id>
func (s *Service) Pay(ctx context.Context, id string) error { return nil }

// Charge takes the payment lock.
//
//lock:mutex key=payment:<id>
func (s *Service) Charge(ctx context.Context, id string) error { return nil }

// Refund holds the payment and calls Pay on the receiver: that is the
// unwrapped method, which takes no lock, so there is no payment-then-order
// path.
//
//lock:mutex key=payment:<id>
func (s *Service) Refund(ctx context.Context, id string) error {
	return s.Pay(ctx, id)
}

// Ship holds the order, then takes the payment.
//
//lock:mutex key=order:<id>
func (s *Service) Ship(ctx context.Context, id string) error {
	return s.self.Charge(ctx, id)
}

// Archive holds order:<id>:archive, which no order:<id> key can equal (no
// escaped value contains ':'), then takes the log.
//
//lock:mutex key=order:<id>:archive
func (s *Service) Archive(ctx context.Context, id string) error {
	return s.self.Log(ctx, id)
}

// Log takes the log lock.
//
//lock:mutex key=log:<id>
func (s *Service) Log(ctx context.Context, id string) error { return nil }

// Replay holds the log, then takes the order lock: log, then order:<id>,
// against Archive's order:<id>:archive, then log. Different keys.
//
//lock:mutex key=log:<id>
func (s *Service) Replay(ctx context.Context, id string) error {
	return s.self.Pay(ctx, id)
}

// Reserve takes a fair lock on the item.
//
//lock:fair key=item:<sku>
func (s *Service) Reserve(ctx context.Context, sku string) error { return nil }

// Fulfil holds the shelf, then the fair item lock.
//
//lock:mutex key=shelf:<sku>
func (s *Service) Fulfil(ctx context.Context, sku string) error {
	return s.self.Reserve(ctx, sku)
}

// Nightly takes the locks one after the other, never nested, in both
// orders: no caller holds one while it waits for the other.
func Nightly(ctx context.Context, svc *ServiceLocked) error {
	if err := svc.Pay(ctx, "1"); err != nil {
		return err
	}
	if err := svc.Charge(ctx, "1"); err != nil {
		return err
	}
	if err := svc.Charge(ctx, "2"); err != nil {
		return err
	}
	return svc.Pay(ctx, "2")
}

// Cancel re-enters its own lock template: nesting within one template is
// re-entry (the same key) and not ordered by the check.
//
//lock:mutex key=order:<id>
func (s *Service) Cancel(ctx context.Context, id string) error {
	return s.self.Pay(ctx, id)
}

type Warehouse struct {
	self *WarehouseLocked
}

// Move takes bin:<from> and crate:<to> in one call, bin first (sorted).
//
//lock:mutex key=crate:<to> key=bin:<from>
func (w *Warehouse) Move(ctx context.Context, from, to string) error { return nil }

// Wrap holds the bin, then seals a crate: bin, then crate, as Move does.
//
//lock:mutex key=bin:<id>
func (w *Warehouse) Wrap(ctx context.Context, id string) error {
	return w.self.Seal(ctx, id)
}

// Seal takes the crate lock.
//
//lock:mutex key=crate:<id>
func (w *Warehouse) Seal(ctx context.Context, id string) error { return nil }

// Split takes two keys whose order depends on the values (split:<a>:x and
// split:<b>:y may sort either way); the check does not guess.
//
//lock:mutex key=split:<a>:x key=split:<b>:y
func (w *Warehouse) Split(ctx context.Context, a, b string) error { return nil }
