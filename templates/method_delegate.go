package templates

import (
	"go/types"

	"github.com/dave/jennifer/jen"
)

// delegateMethod emits a method that only forwards to the inner value, so
// that the wrapper keeps the whole method set of the wrapped type.
func delegateMethod(wr *Wrapper, m *Method) jen.Code {
	call := innerCall(wr, m, nil)
	if len(m.Results) == 0 {
		return methodDecl(wr, m, false).Block(call)
	}
	return methodDecl(wr, m, false).Block(jen.Return(call))
}

// methodDecl writes `func (w *XLocked[T...]) Name(params) results`; results
// are named when named is set.
func methodDecl(wr *Wrapper, m *Method, named bool) *jen.Statement {
	recvType := jen.Id(wr.Name())
	if len(m.RecvTypeParams) > 0 {
		ids := make([]jen.Code, len(m.RecvTypeParams))
		for i, n := range m.RecvTypeParams {
			ids[i] = jen.Id(n)
		}
		recvType = recvType.Types(ids...)
	}
	params := make([]jen.Code, len(m.Params))
	for i, p := range m.Params {
		if s, ok := p.Type.(*types.Slice); ok && m.Variadic && i == len(m.Params)-1 {
			params[i] = jen.Id(p.Name).Op("...").Add(typeCode(s.Elem()))
			continue
		}
		params[i] = jen.Id(p.Name).Add(typeCode(p.Type))
	}
	results := make([]jen.Code, len(m.Results))
	for i, r := range m.Results {
		if named {
			results[i] = jen.Id(r.Name).Add(typeCode(r.Type))
		} else {
			results[i] = typeCode(r.Type)
		}
	}
	decl := jen.Func().Params(jen.Id(m.Recv).Op("*").Add(recvType)).Id(m.Name).Params(params...)
	switch {
	case len(results) == 1 && !named:
		decl = decl.Add(results[0])
	case len(results) > 0:
		decl = decl.Params(results...)
	}
	return decl
}

// innerCall is w.inner.Name(args...), with ctx replacing the first argument
// when given.
func innerCall(wr *Wrapper, m *Method, ctx jen.Code) jen.Code {
	args := make([]jen.Code, len(m.Params))
	for i, p := range m.Params {
		switch {
		case i == 0 && ctx != nil:
			args[i] = ctx
		case m.Variadic && i == len(m.Params)-1:
			args[i] = jen.Id(p.Name).Op("...")
		default:
			args[i] = jen.Id(p.Name)
		}
	}
	return recvField(m, "inner").Dot(m.Name).Call(args...)
}
