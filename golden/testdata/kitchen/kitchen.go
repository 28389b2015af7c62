// Package kitchen exercises many lockgen features in one package.
package kitchen

import (
	"context"
	"strings"
	"time"
)

type Request struct {
	OrderID int64
	Meta    *Meta
}

type Meta struct{ Region string }

func (r *Request) Tenant() *Tenant { return &Tenant{ID: "t"} }

type Tenant struct{ ID string }

type Color int

func (c Color) String() string { return "c" }

type Orders struct{}

// Pay pays.
//
//lock:fair key=order:<id> lease=10s
func (o *Orders) Pay(ctx context.Context, id string, cents int64) error { return nil }

// Ship ships.
//
//lock:mutex key=tenant:<req.Tenant().ID>:order:<req.OrderID> key=region:<req.Meta.Region> wait=0 renew=false lease=1m30s onbusy=skip
func (o *Orders) Ship(ctx context.Context, req *Request) (n int, s []string, err error) {
	return 0, nil, nil
}

//lock:semaphore key=batch:<ids> permits=3 wait=250ms
func (o *Orders) Batch(ctx context.Context, ids []string, at time.Time, color Color) error {
	return nil
}

//lock:read key=t:<at>:<color>
func (o Orders) Peek(runtime context.Context, at time.Time, color Color, err string, held, w int, locks ...string) (string, error) {
	return strings.Repeat("", 0), nil
}

func (o *Orders) Plain(a, b int) int { return a + b }
