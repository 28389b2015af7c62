// Package generic has a generic wrapped type whose methods rename the type
// parameters in their receivers.
package generic

import "context"

type Number interface{ ~int | ~int64 }

type Cache[K comparable, V any, N Number] struct{ items map[K]V }

// Put stores v.
//
//lock:write key=cache:<key>
func (c *Cache[A, B, C]) Put(ctx context.Context, key string, v B, n C) error { return nil }

func (c *Cache[K, V, N]) Len() int { return len(c.items) }

// Store is a generic interface.
type Store[T any] interface {
	// Save saves.
	//
	//lock:mutex key=store:<id> lease=5s
	Save(ctx context.Context, id uint32, item T) (T, error)
	Load(id uint32) (T, bool)
}
