// Package quoteerrors quotes option values: the quotes would become part of
// the key.
package quoteerrors

import "context"

type S struct{}

//lock:mutex key="a:<id>"
func (S) Double(ctx context.Context, id string) error { return nil }

//lock:mutex key='a:<id>'
func (S) Single(ctx context.Context, id string) error { return nil }

//lock:mutex key=`a`
func (S) Back(ctx context.Context) error { return nil }

//lock:mutex key="a b"
func (S) Spaces(ctx context.Context) error { return nil }

//lock:mutex key=order:"<id>"
func (S) Inner(ctx context.Context, id string) error { return nil }

//lock:mutex key=a lease="10s"
func (S) Lease(ctx context.Context) error { return nil }

//lock:semaphore key=a permits="2"
func (S) Permits(ctx context.Context) error { return nil }
