// Package outputerrors has a lock_gen.go whose header line was removed:
// lockgen refuses to overwrite it, in one message (not one per name it
// declares, nor per compile error in it).
package outputerrors

import "context"

type Svc struct{}

//lock:mutex key=order:<id>
func (s *Svc) Pay(ctx context.Context, id string) error { return nil }

//lock:mutex key=order:<id>:refund
func (s *Svc) Refund(ctx context.Context, id string) error { return nil }
