// Package typeparamerrors has type parameters lockgen cannot render.
package typeparamerrors

import "context"

type Repo[K comparable, M ~int | ~uint, F ~float64] struct{}

//lock:mutex key=k:<k>
func (r *Repo[K, M, F]) ByKey(ctx context.Context, k K) error { return nil }

//lock:mutex key=m:<m>
func (r *Repo[K, M, F]) Mixed(ctx context.Context, m M) error { return nil }

//lock:mutex key=f:<f>
func (r *Repo[K, M, F]) Float(ctx context.Context, f F) error { return nil }

//lock:mutex key=ks:<ks>
func (r *Repo[K, M, F]) Many(ctx context.Context, ks []K) error { return nil }
