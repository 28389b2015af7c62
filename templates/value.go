package templates

import (
	"strconv"

	"github.com/dave/jennifer/jen"
)

// chainEval accumulates the statements that evaluate placeholder chains in a
// locked method's body. A chain like req.Tenant().ID is written inline unless
// a nil check is needed on an intermediate value; then the value is first
// stored in a fresh local so that a method is never called twice.
type chainEval struct {
	m       *Method
	stmts   []jen.Code
	checked map[string]bool // identifiers already checked for nil (never reassigned)
}

// fail returns `return <zero results>, err` with err built by errCode.
func (c *chainEval) fail(errCode jen.Code) jen.Code {
	res := make([]jen.Code, 0, len(c.m.Results))
	for _, r := range c.m.Results[:len(c.m.Results)-1] {
		res = append(res, jen.Id(r.Name))
	}
	return jen.Return(append(res, errCode)...)
}

// invalidKey is an error wrapping runtime.ErrInvalidKey with a constant
// message, built by runtime.InvalidKeyError so the output needs no fmt.
func invalidKey(template, problem string) jen.Code {
	return jen.Qual(runtimePath, "InvalidKeyError").Call(jen.Lit("key " + strconv.Quote(template) + ": " + problem))
}

// operand is an expression built from an identifier and selectors; it is
// rebuilt on every use because jennifer statements are mutable.
type operand struct {
	ident string
	sels  []Step
	deref bool // *ident (only set on an identifier without selectors)
}

func (o operand) code() *jen.Statement {
	if o.deref {
		return jen.Op("*").Id(o.ident)
	}
	s := jen.Id(o.ident)
	for _, st := range o.sels {
		s = s.Dot(st.Name)
		if st.Call {
			s = s.Call()
		}
	}
	return s
}

// materialize stores o in a fresh local unless it is already an identifier.
func (c *chainEval) materialize(o operand, base string) operand {
	if len(o.sels) == 0 {
		return o
	}
	name := c.m.Names.Fresh(base)
	c.stmts = append(c.stmts, jen.Id(name).Op(":=").Add(o.code()))
	return operand{ident: name}
}

func (c *chainEval) nilCheck(o operand, template, display string) operand {
	o = c.materialize(o, "v")
	if c.checked[o.ident] {
		return o
	}
	if c.checked == nil {
		c.checked = make(map[string]bool)
	}
	c.checked[o.ident] = true
	c.stmts = append(c.stmts, jen.If(jen.Id(o.ident).Op("==").Nil()).Block(
		c.fail(invalidKey(template, display+" is nil"))))
	return o
}

// value evaluates v's chain and returns the operand holding the value (the
// slice itself when v.Slice).
func (c *chainEval) value(v *Value, template string) operand {
	o := operand{ident: v.Root}
	for _, st := range v.Steps {
		if st.NilCheck {
			o = c.nilCheck(o, template, st.Display)
		}
		o.sels = append(o.sels, st)
	}
	if v.NilCheck && !v.Slice {
		o = c.nilCheck(o, template, v.Source)
		o.deref = v.Deref
	}
	return o
}
