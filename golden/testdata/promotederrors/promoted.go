// Package promotederrors embeds a type whose annotated method cannot be
// locked from here: lockgen refuses it rather than delegate unlocked.
package promotederrors

import (
	"context"

	"github.com/lockgen/lockgen/golden/testdata/promotederrors/base"
)

type Service struct {
	base.Ledger
}

//lock:mutex key=service
func (s *Service) Own(ctx context.Context) error { return nil }
