// Package niladic writes methods without arguments in placeholders with or
// without parentheses, as text/template does.
package niladic

import "context"

type Tenant struct{ ID string }

type Req struct{ shard int }

func (r Req) Shard() int       { return r.shard }
func (r *Req) Tenant() *Tenant { return &Tenant{ID: "t"} }
func (r Req) Region() string   { return "eu" }

type S struct{}

//lock:mutex key=s:<req.Shard> key=t:<req.Tenant.ID>:<req.Region()>
func (s *S) Do(ctx context.Context, req *Req) error { return nil }
