//go:build lockgen_other

package otherfileerrors

import "context"

type Svc struct{}

// Pay is annotated as in the build lockgen loads: fine.
//
//lock:mutex key=pay:<id>
func (s *Svc) Pay(ctx context.Context, id string) error { return nil }

//lock:fair key=ship:<id>
func (s *Svc) Ship(ctx context.Context, id string) error { return nil }

//lock:mutex key=cancel:<id>
func (s *Svc) Cancel(ctx context.Context, id string) error { return nil }

//lock:mutex key=only
func (s *Svc) Only(ctx context.Context) error { return nil }

// lock:mutex key=typo
func (s *Svc) Typo(ctx context.Context) error { return nil }
