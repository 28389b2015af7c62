// Package typeparams renders placeholders whose type is a type parameter:
// by its type set (all string types, all integers of one signedness, all
// bools: converted with string(v), int64(v), uint64(v), bool(v)) or by a
// String or MarshalText method its constraint requires.
package typeparams

import (
	"context"
	"encoding"
)

type ID interface {
	comparable
	String() string
}

type Signed interface{ ~int | ~int32 | int64 }

type Unsigned interface{ ~uint8 | ~uint64 }

type Repo[K ID, V any] struct{}

// Get keys by K.String(); a type parameter is never compared with nil.
//
//lock:mutex key=repo:<id>
func (r *Repo[K, V]) Get(ctx context.Context, id K) (V, error) {
	var v V
	return v, nil
}

type Names[S ~string] struct{}

//lock:mutex key=name:<s> key=names:<all>
func (n *Names[S]) Put(ctx context.Context, s S, all []S) error { return nil }

type Counters[I Signed, U Unsigned, B ~bool, T encoding.TextMarshaler, N interface {
	Signed
	comparable
}] struct{}

//lock:write key=c:<i>:<u>:<b>:<t>:<n>:<p>
func (c *Counters[I, U, B, T, N]) Add(ctx context.Context, i I, u U, b B, t T, n N, p *I) error {
	return nil
}
