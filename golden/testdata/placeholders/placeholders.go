// Package placeholders covers every accepted placeholder type.
package placeholders

import (
	"context"
	"net/netip"
)

type Region struct{ name string }

func (r Region) String() string { return r.name }

type ptrStringer struct{ v string }

func (p *ptrStringer) String() string { return p.v }

type Status string
type Level uint16
type Flag bool

type Base struct{ Shard int8 }

type Job struct {
	*Base
	Region  Region
	Regions []*Region
	Count   *int
	Tags    [2]Status
	inner   ptrStringer
}

func (j *Job) Owner() *Region { return &j.Region }

type Runner struct{}

// Run covers named string/uint/bool, pointer to int, Stringer (value and
// pointer receivers), TextMarshaler, promoted field through an embedded
// pointer, a slice of Stringer pointers and an array.
//
//lock:mutex key=a:<s>:<lv>:<f>:<job.Count> key=b:<job.Region>:<job.Owner()>:<job.inner>:<addr>
//lock:mutex key=c:<job.Shard> key=d:<job.Regions> key=e:<job.Tags>:x
func (Runner) Run(ctx context.Context, s Status, lv Level, f Flag, job *Job, addr netip.Addr) error {
	return nil
}
