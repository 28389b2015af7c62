// Package lockorderignore has the cycles of package lockorder, each marked
// order=ignore on one of its //lock: lines: lockgen generates without
// complaint.
package lockorderignore

import (
	"context"

	"github.com/lockgen/lockgen/runtime"
)

// Service calls its own locked methods through self, the wrapper New
// returns, so that nested calls take their locks.
type Service struct {
	self *ServiceLocked
}

func New(l *runtime.Locker) *ServiceLocked {
	s := &Service{}
	s.self = NewServiceLocked(s, l)
	return s.self
}

// Pay charges an order.
//
//lock:mutex key=order:<id>
func (s *Service) Pay(ctx context.Context, id string) error { return nil }

// Refund holds the payment, then pays a correction: payment, then order.
// Refunds run only while shipping is stopped, so the cycle with Ship never
// happens; order=ignore says so.
//
//lock:mutex key=payment:<id> order=ignore
func (s *Service) Refund(ctx context.Context, id string) error {
	return s.self.Pay(ctx, id)
}

// Ship holds the order and settles its payment: order, then payment.
//
//lock:mutex key=order:<orderID>
func (s *Service) Ship(ctx context.Context, orderID string) error {
	return s.settle(ctx, orderID)
}

func (s *Service) settle(ctx context.Context, id string) error {
	return s.self.Charge(ctx, id)
}

// Charge takes the payment lock.
//
//lock:mutex key=payment:<paymentID>
func (s *Service) Charge(ctx context.Context, paymentID string) error { return nil }
