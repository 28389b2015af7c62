package templates

import "github.com/dave/jennifer/jen"

// recvField is w.<name> for the method's receiver.
func recvField(m *Method, name string) *jen.Statement {
	return jen.Id(m.Recv).Dot(name)
}

// wrapperDecls emits, for one wrapped type T:
//
//	type TLocked[P C] struct { inner *T[P] (or T for an interface); locker *runtime.Locker }
//	func NewTLocked[P C](inner *T[P], l *runtime.Locker) *TLocked[P]   (interface: returns T[P])
//	var _ T = (*TLocked)(nil)                                          (non-generic interfaces)
//	methods...
func wrapperDecls(wr *Wrapper) []jen.Code {
	var tparamDecl, tparamUse []jen.Code
	for _, tp := range wr.TypeParams {
		tparamDecl = append(tparamDecl, jen.Id(tp.Name).Add(typeCode(tp.Constraint)))
		tparamUse = append(tparamUse, jen.Id(tp.Name))
	}
	generic := func(s *jen.Statement, list []jen.Code) *jen.Statement {
		if len(list) == 0 {
			return s
		}
		return s.Types(list...)
	}
	inner := generic(jen.Id(wr.TypeName), tparamUse)
	if !wr.Interface {
		inner = jen.Op("*").Add(inner)
	}
	self := generic(jen.Id(wr.Name()), tparamUse)

	var out []jen.Code
	out = append(out,
		wrapperDoc(wr),
		generic(jen.Type().Id(wr.Name()), tparamDecl).Struct(
			jen.Id("inner").Add(inner),
			jen.Id("locker").Op("*").Qual(runtimePath, "Locker"),
		),
		jen.Line(),
	)

	ret := jen.Op("*").Add(self)
	doc := wr.ConstructorName() + " wraps inner; its annotated methods take their locks with l."
	if wr.Interface {
		ret = generic(jen.Id(wr.TypeName), tparamUse)
		doc = wr.ConstructorName() + " returns inner decorated with the locks of its annotated methods, taken with l."
	}
	out = append(out,
		docComment(doc),
		generic(jen.Func().Id(wr.ConstructorName()), tparamDecl).
			Params(jen.Id("inner").Add(inner.Clone()), jen.Id("l").Op("*").Qual(runtimePath, "Locker")).
			Add(ret).
			Block(jen.Return(jen.Op("&").Add(self.Clone()).Values(jen.Dict{
				jen.Id("inner"):  jen.Id("inner"),
				jen.Id("locker"): jen.Id("l"),
			}))),
		jen.Line(),
	)
	if wr.Interface && len(wr.TypeParams) == 0 {
		// Fails the build if the interface gains a method after generation.
		out = append(out, docComment(wr.Name()+" must have every method of "+wr.TypeName+": this fails the build if "+wr.TypeName+" gains one after generation."), jen.Var().Id("_").Id(wr.TypeName).Op("=").Parens(jen.Op("*").Id(wr.Name())).Parens(jen.Nil()), jen.Line())
	}
	for i := range wr.Methods {
		m := &wr.Methods[i]
		if m.Locked != nil {
			out = append(out, lockedMethodDoc(wr, m), lockedMethod(wr, m), jen.Line())
		} else {
			out = append(out, delegateMethodDoc(wr, m), delegateMethod(wr, m), jen.Line())
		}
	}
	return out
}
