// Package commenterrors has annotations that are misspelled or misplaced:
// each would leave a method unlocked if lockgen ignored it.
package commenterrors

import "context"

type S struct {
	//lock:mutex key=field
	mu int

	n int // lock:mutex key=trailing
}

// lock:mutex key=a:<id>
func (s *S) Spaced(ctx context.Context, id string) error { return nil }

// Lock:mutex key=a:<id>
func (s *S) Upper(ctx context.Context, id string) error { return nil }

/* lock:mutex key=a:<id> */
func (s *S) Block(ctx context.Context, id string) error { return nil }

/*
 * Multi does a thing.
 * lock:fair key=m:<id> lease=5s
 */
func (s *S) Multi(ctx context.Context, id string) error { return nil }

//lockgen:mutex key=a:<id>
func (s *S) Named(ctx context.Context, id string) error { return nil }

// @lock mutex key=a:<id>
func (s *S) At(ctx context.Context, id string) error { return nil }

// LOCK: MUTEX key = a:<id>
func (s *S) Shout(ctx context.Context, id string) error { return nil }

//lock:mutex key=detached

func (s *S) Detached(ctx context.Context) error { return nil }

// lock:mutex key=plain
func Plain(ctx context.Context) error { return nil }

//lock:mutex key=plain
func Plain2(ctx context.Context) error { return nil }

// lock:mutex key=type
type T struct{}

func body() {
	// lock:mutex key=inside
	//lock:mutex key=inside
}

type I interface {
	Pay(ctx context.Context, id string) error // lock:mutex key=pay:<id>
	Ship(ctx context.Context) error           //lock:mutex key=ship
}

// These stay comments: prose that mentions locks.
//
// Lock: the mutex guards n.
// lock: held while n changes
// Locker: see mu
// The annotation //lock:mutex key=x goes on a method.
func (s *S) Prose() {}
