// Package promoted embeds types with annotated methods: a wrapper locks a
// promoted annotated method just as the declaring type's wrapper does,
// whether it comes from this package (generic or not), from another
// package, or from an embedded interface.
package promoted

import (
	"context"

	"github.com/lockgen/lockgen/golden/testdata/promoted/base"
)

type Base struct{}

//lock:mutex key=base:<id>
func (b *Base) Do(ctx context.Context, id string) error { return nil }

type Store[K ~int64] struct{}

//lock:write key=store:<k>
func (s Store[X]) Put(ctx context.Context, k X) error { return nil }

type Payer interface {
	//lock:fair key=pay:<order>
	Pay(ctx context.Context, order string) error
}

// Service gets Do, Put, Pay, Post, Audit and Balance by embedding.
type Service struct {
	*Base
	Store[int64]
	Payer
	base.Ledger
	base.Auditor
}

//lock:mutex key=service:own
func (s *Service) Own(ctx context.Context) error { return nil }

// Generic embeds a generic type with its own type parameter.
type Generic[K ~int64] struct {
	Store[K]
}

//lock:mutex key=generic:<k>
func (g *Generic[K]) Get(ctx context.Context, k K) error { return nil }

// Checkout is an interface that embeds an annotated interface.
type Checkout interface {
	Payer
	//lock:mutex key=checkout:<cart>
	Close(ctx context.Context, cart string) error
}
