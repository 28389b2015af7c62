// Package cascadeerrors: each mistake gets one message, with the advice
// that fits it.
package cascadeerrors

import "context"

type S struct{}

//lock:mutex key = a:<id>
func (S) SpacesAround(ctx context.Context, id string) error { return nil }

//lock:mutex key= a:<id> lease =10s
func (S) SpacesAfter(ctx context.Context, id string) error { return nil }

//lock:mutex key:a:<id>
func (S) Colon(ctx context.Context, id string) error { return nil }

//lock:mutex key=b:<b>
func (S) Bytes(ctx context.Context, b []byte) error { return nil }

//lock:mutex key=u:<u>
func (S) Array(ctx context.Context, u [16]byte) error { return nil }

//lock:semaphore key=s permit=2
func (S) Permit(ctx context.Context) error { return nil }

//lock:mutx keys=k
func (S) Typos(ctx context.Context) error { return nil }
