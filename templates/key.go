package templates

import (
	"github.com/dave/jennifer/jen"
)

const runtimePath = "github.com/lockgen/lockgen/runtime"

// formatted returns the key text of one value (already nil-checked), adding
// statements to c when the format can fail (TextMarshaler).
func (c *chainEval) formatted(v *Value, o operand, template string) jen.Code {
	val := o.code()
	convert := func(typ string) *jen.Statement {
		if v.Convert {
			return jen.Id(typ).Call(val)
		}
		return val
	}
	switch v.Format {
	case FormatString:
		return jen.Qual(runtimePath, "EscapeKeyPart").Call(convert("string"))
	case FormatInt:
		return jen.Qual("strconv", "FormatInt").Call(convert("int64"), jen.Lit(10))
	case FormatUint:
		return jen.Qual("strconv", "FormatUint").Call(convert("uint64"), jen.Lit(10))
	case FormatBool:
		return jen.Qual("strconv", "FormatBool").Call(convert("bool"))
	case FormatStringer:
		return jen.Qual(runtimePath, "EscapeKeyPart").Call(val.Dot("String").Call())
	case FormatText:
		name := c.m.Names.Fresh("k")
		errName := c.m.Results[len(c.m.Results)-1].Name
		c.stmts = append(c.stmts,
			jen.List(jen.Id(name), jen.Id(errName)).Op(":=").Qual(runtimePath, "EscapeText").Call(val),
			jen.If(jen.Id(errName).Op("!=").Nil()).Block(c.fail(jen.Id(errName))))
		return jen.Id(name)
	}
	// The generator never builds a Value without a format; keep the output
	// failing to compile rather than panicking if that ever changes.
	return jen.Id("lockgen_unknown_format")
}

// keyExpr renders the parts of l into a string concatenation. sliceElem is
// the expression of the current element for l's slice value (nil when l has
// none).
func (c *chainEval) keyExpr(l *Lock, scalars []jen.Code, sliceElem jen.Code) jen.Code {
	var s *jen.Statement
	add := func(code jen.Code) {
		if s == nil {
			s = jen.Add(code)
			return
		}
		s = s.Op("+").Add(code)
	}
	for i, p := range l.Parts {
		switch {
		case p.Value == nil:
			add(jen.Lit(p.Literal))
		case p.Value.Slice:
			add(sliceElem)
		default:
			add(scalars[i])
		}
	}
	return s
}

// scalarParts evaluates every non-slice value of l into key text, indexed
// like l.Parts. When hoist is set, each text is stored in a local so that a
// loop over a slice placeholder does not re-evaluate it.
func (c *chainEval) scalarParts(l *Lock, hoist bool) []jen.Code {
	out := make([]jen.Code, len(l.Parts))
	for i, p := range l.Parts {
		if p.Value == nil || p.Value.Slice {
			continue
		}
		text := c.formatted(p.Value, c.value(p.Value, l.Template), l.Template)
		if hoist {
			name := c.m.Names.Fresh("k")
			c.stmts = append(c.stmts, jen.Id(name).Op(":=").Add(text))
			text = jen.Id(name)
		}
		out[i] = text
	}
	return out
}

func sliceValue(l *Lock) *Value {
	for _, p := range l.Parts {
		if p.Value != nil && p.Value.Slice {
			return p.Value
		}
	}
	return nil
}

// lockLiteral is the runtime.Lock composite literal for l with the given
// key, one field per line. method ("Type.Method") and l.Template name the
// lock for observers: both are constant per call site, so metrics can use
// them as labels where the rendered key would have unbounded cardinality.
func lockLiteral(l *Lock, method string, key jen.Code) jen.Code {
	k := kinds[l.Kind]
	fields := []jen.Code{
		jen.Id("Kind").Op(":").Qual(runtimePath, k.runtimeConst),
		jen.Id("Key").Op(":").Add(key),
	}
	if l.Lease > 0 {
		fields = append(fields, jen.Id("Lease").Op(":").Add(durationCode(l.Lease)))
	}
	if l.NoRenew {
		fields = append(fields, jen.Id("NoRenew").Op(":").True())
	}
	if l.HasWait {
		if l.Wait == 0 {
			fields = append(fields, jen.Id("Wait").Op(":").Qual(runtimePath, "NoWait"))
		} else {
			fields = append(fields, jen.Id("Wait").Op(":").Add(durationCode(l.Wait)))
		}
	}
	if k.extraFields != nil {
		fields = append(fields, k.extraFields(l)...)
	}
	fields = append(fields,
		jen.Id("Method").Op(":").Lit(method),
		jen.Id("Template").Op(":").Lit(l.Template),
	)
	return jen.Qual(runtimePath, "Lock").Custom(jen.Options{Open: "{", Close: "}", Separator: ",", Multi: true}, fields...)
}
