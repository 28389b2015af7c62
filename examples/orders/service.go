package main

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/fencing"
	"github.com/lockgen/lockgen/runtime"
)

//go:generate go tool lockgen

// Order is what the service keeps per order.
type Order struct {
	ID     string
	Status string
	Paid   int64 // cents
}

// OrderService is an ordinary service. The //lock: lines say which
// distributed lock each method needs; lockgen writes OrderServiceLocked
// (lock_gen.go), which takes the locks around each call.
type OrderService struct {
	mu     sync.Mutex // guards orders: the in-process store of this demo
	orders map[string]*Order

	work   time.Duration // how long each call holds its lock
	report *Report       // what the demo prints

	// shipments is where Ship writes, with the lock's fencing token: a
	// Redis (here the embedded one) that refuses a token older than the
	// last. pause, if set, runs between Ship's work and its write: the
	// demo stalls a holder there, as a GC pause or a stopped VM would.
	shipments backend.Backend
	pause     func(who string)
}

// ErrAlreadyPaid is returned by Pay for an order that was paid before.
var ErrAlreadyPaid = errors.New("order already paid")

// Pay charges an order. Payments of one order go one at a time and in the
// order they arrived (fair lock), so a retry storm cannot starve the first
// customer's request.
//
//lock:fair key=payment:<orderID> lease=10s
func (s *OrderService) Pay(ctx context.Context, orderID, customer string, cents int64) error {
	s.report.Granted(ctx, "pay", customer)
	defer s.report.Done("pay", customer)
	time.Sleep(s.work)
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.order(orderID)
	if o.Paid > 0 {
		return ErrAlreadyPaid
	}
	o.Paid, o.Status = cents, "paid by "+customer
	return nil
}

// Lookup reads an order. Many lookups run at once; none runs while Update
// holds the write side.
//
//lock:read key=order:<orderID> lease=5s
func (s *OrderService) Lookup(ctx context.Context, orderID, who string) (Order, error) {
	s.report.Granted(ctx, "read", who)
	defer s.report.Done("read", who)
	time.Sleep(s.work)
	s.mu.Lock()
	defer s.mu.Unlock()
	return *s.order(orderID), nil
}

// Update changes an order's status, alone.
//
//lock:write key=order:<orderID> lease=5s
func (s *OrderService) Update(ctx context.Context, orderID, who, status string) error {
	s.report.Granted(ctx, "write", who)
	defer s.report.Done("write", who)
	time.Sleep(s.work)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.order(orderID).Status = status
	return nil
}

// Export builds a tenant's export. Exports are expensive: at most two per
// tenant run at once across the whole fleet.
//
//lock:semaphore key=exports:<tenant> permits=2 lease=30s
func (s *OrderService) Export(ctx context.Context, tenant, who string) (rows int, err error) {
	s.report.Granted(ctx, "export", who)
	defer s.report.Done("export", who)
	time.Sleep(2 * s.work)
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.orders), nil
}

// SettleNightly is the fleet-wide nightly job: every instance calls it on
// its schedule; while one runs it, the others skip without error
// (runtime.TrackSkips tells them). An instance that starts after the job
// finished runs it again: the lock excludes, it does not remember.
//
//lock:mutex key=job:nightly-settlement lease=1m wait=0 onbusy=skip
func (s *OrderService) SettleNightly(ctx context.Context, instance string) error {
	s.report.Granted(ctx, "settle", instance)
	defer s.report.Done("settle", instance)
	time.Sleep(3 * s.work)
	return nil
}

// Ship records who shipped an order. The write carries the lock's fencing
// token, and the store refuses it if a newer holder has written since: a
// holder that stalled past its lease cannot overwrite the one that took
// the lock over, even if it never looks at its context.
//
//lock:mutex key=ship:<orderID> lease=30s
func (s *OrderService) Ship(ctx context.Context, orderID, who string) error {
	s.report.Granted(ctx, "ship", who)
	defer s.report.Done("ship", who)
	time.Sleep(s.work)
	if s.pause != nil {
		// The stall falls after the decision to write, where no look at ctx
		// helps: the write goes out as it would have before the pause.
		held := ctx
		ctx = context.WithoutCancel(ctx)
		s.pause(who)
		if errors.Is(context.Cause(held), runtime.ErrLockLost) {
			s.report.Note(who, lostWhilePaused)
		}
	}
	fence, _ := runtime.Fence(ctx)
	return fencing.Set(ctx, s.shipments, "shipment:"+orderID, "shipped by "+who, fence)
}

// lostWhilePaused is Ship's note for a holder that lost its lock while
// paused.
const lostWhilePaused = "wakes: lock lost (ErrLockLost), but the write is on its way"

// Orders is not annotated: the wrapper delegates it unchanged.
func (s *OrderService) Orders() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.orders)
}

func (s *OrderService) order(id string) *Order {
	o, ok := s.orders[id]
	if !ok {
		o = &Order{ID: id, Status: "new"}
		s.orders[id] = o
	}
	return o
}

// fenceOf is the fencing token of the lock the call holds, for the report.
func fenceOf(ctx context.Context) int64 {
	f, _ := runtime.Fence(ctx)
	return f
}
