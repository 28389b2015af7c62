//go:build !lockgen_other

// Package otherfileerrors has annotations in files the load leaves out: a
// test file, and a file excluded by a build constraint. lock_gen.go serves
// every build, so only a method annotated the same way in every build is
// accepted.
package otherfileerrors

import "context"

type Svc struct{}

//lock:mutex key=pay:<id>
func (s *Svc) Pay(ctx context.Context, id string) error { return nil }

//lock:mutex key=ship:<id>
func (s *Svc) Ship(ctx context.Context, id string) error { return nil }

func (s *Svc) Cancel(ctx context.Context, id string) error { return nil }
