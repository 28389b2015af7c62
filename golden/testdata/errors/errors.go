// Package errors holds one of every problem lockgen must report, all in one
// run.
package errors

import "context"

type Req struct {
	ID   string
	Meta map[string]string
	IDs  []string
}

type S struct{}

//lock:spin key=a
func (S) UnknownKind(ctx context.Context) error { return nil }

//lock:mutex key=a color=red
func (S) UnknownOption(ctx context.Context) error { return nil }

//lock:mutex key=a lease=10
func (S) BadDuration(ctx context.Context) error { return nil }

//lock:mutex lease=1s
func (S) MissingKey(ctx context.Context) error { return nil }

//lock:mutex key=a:<nope>
func (S) UnknownPlaceholder(ctx context.Context, id string) error { return nil }

//lock:mutex key=a:<r.Meta>
func (S) UnsupportedType(ctx context.Context, r Req) error { return nil }

//lock:mutex key=a
func (S) MissingCtx(id string) error { return nil }

//lock:mutex key=a
func (S) MissingError(ctx context.Context) int { return 0 }

//lock:mutex key=a permits=2
func (S) PermitsOnMutex(ctx context.Context) error { return nil }

//lock:semaphore key=a
func (S) MissingPermits(ctx context.Context) error { return nil }

//lock:mutex key=a{<id>
func (S) BadTemplate(ctx context.Context, id string) error { return nil }

//lock:mutex key=<a><b>
func (S) Adjacent(ctx context.Context, a, b string) error { return nil }

//lock:mutex key=<r.IDs>:<more>
func (S) TwoSlices(ctx context.Context, r Req, more []int) error { return nil }

//lock:mutex key=a lease=1s lease=2s
func (S) Duplicate(ctx context.Context) error { return nil }

//lock:mutex key=a onbusy=skip
//lock:mutex key=b
func (S) MixedOnBusy(ctx context.Context) error { return nil }

//lock:mutex key=a:<r.Nope>:<r.ID()>
func (S) BadChain(ctx context.Context, r *Req) error { return nil }

//lock:mutex key=plain
func PlainFunction(ctx context.Context) error { return nil }

//lock:mutex key=type
type T struct{}

func stray() {
	//lock:mutex key=inside
}

type A struct{ X string }

type B struct{ X string }

type Both struct {
	A
	B
}

//lock:mutex key=<b.X>
func (S) Ambiguous(ctx context.Context, b Both) error { return nil }

type V struct{ N int }

func (v *V) P() string { return "" }

type G struct{}

func (G) Get() V { return V{} }

//lock:mutex key=<g.Get.P>
func (S) PointerMethodOnValue(ctx context.Context, g G) error { return nil }
