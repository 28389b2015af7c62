package templates

import (
	"go/types"

	"github.com/dave/jennifer/jen"
)

// typeCode writes a go/types type as jennifer code. Named types of other
// packages go through jen.Qual, so jennifer writes the import (under the
// name fixed in File.Imports); types of the output's own package are written
// unqualified because the file is created with that package path.
func typeCode(t types.Type) *jen.Statement {
	switch t := t.(type) {
	case *types.Basic:
		if t.Kind() == types.UnsafePointer {
			return jen.Qual("unsafe", "Pointer")
		}
		return jen.Id(t.Name())
	case *types.Alias:
		return objectCode(t.Obj()).Add(typeArgsCode(t.TypeArgs()))
	case *types.Named:
		return objectCode(t.Obj()).Add(typeArgsCode(t.TypeArgs()))
	case *types.TypeParam:
		return jen.Id(t.Obj().Name())
	case *types.Pointer:
		return jen.Op("*").Add(typeCode(t.Elem()))
	case *types.Slice:
		return jen.Index().Add(typeCode(t.Elem()))
	case *types.Array:
		return jen.Index(jen.Lit(int(t.Len()))).Add(typeCode(t.Elem()))
	case *types.Map:
		return jen.Map(typeCode(t.Key())).Add(typeCode(t.Elem()))
	case *types.Chan:
		return chanCode(t)
	case *types.Signature:
		return jen.Func().Add(signatureCode(t))
	case *types.Struct:
		return structCode(t)
	case *types.Interface:
		return interfaceCode(t)
	case *types.Union:
		return unionCode(t)
	}
	// Every type that can appear in a signature is handled above; this keeps
	// an unforeseen one visible in the output (and the build) rather than
	// panicking.
	return jen.Id(types.TypeString(t, nil))
}

// chanCode spells a channel type with its direction.
func chanCode(t *types.Chan) *jen.Statement {
	switch t.Dir() {
	case types.SendOnly:
		return jen.Chan().Op("<-").Add(typeCode(t.Elem()))
	case types.RecvOnly:
		return jen.Op("<-").Chan().Add(typeCode(t.Elem()))
	default:
		return jen.Chan().Add(typeCode(t.Elem()))
	}
}

// structCode spells a struct type literal: fields in order, embedded ones
// by their type alone, tags kept.
func structCode(t *types.Struct) *jen.Statement {
	fields := make([]jen.Code, t.NumFields())
	for i := range t.NumFields() {
		f := t.Field(i)
		var c *jen.Statement
		if f.Embedded() {
			c = typeCode(f.Type())
		} else {
			c = jen.Id(f.Name()).Add(typeCode(f.Type()))
		}
		if tag := t.Tag(i); tag != "" {
			c = c.Add(jen.Lit(tag))
		}
		fields[i] = c
	}
	return jen.Struct(fields...)
}

// interfaceCode spells an interface literal; an implicit one (a bare
// constraint such as ~int in a type parameter list) is its one element.
func interfaceCode(t *types.Interface) *jen.Statement {
	if t.IsImplicit() && t.NumEmbeddeds() == 1 {
		return typeCode(t.EmbeddedType(0))
	}
	var elems []jen.Code
	for i := range t.NumEmbeddeds() {
		elems = append(elems, typeCode(t.EmbeddedType(i)))
	}
	for i := range t.NumExplicitMethods() {
		m := t.ExplicitMethod(i)
		elems = append(elems, jen.Id(m.Name()).Add(signatureCode(m.Type().(*types.Signature))))
	}
	return jen.Interface(elems...)
}

// unionCode spells a union of constraint terms, ~ kept.
func unionCode(t *types.Union) *jen.Statement {
	var s *jen.Statement
	for i := range t.Len() {
		term := t.Term(i)
		if s == nil {
			s = jen.Null()
		} else {
			s = s.Op("|")
		}
		if term.Tilde() {
			s = s.Op("~")
		}
		s = s.Add(typeCode(term.Type()))
	}
	return s
}

func objectCode(obj *types.TypeName) *jen.Statement {
	if obj.Pkg() == nil { // predeclared: error, any, comparable
		return jen.Id(obj.Name())
	}
	return jen.Qual(obj.Pkg().Path(), obj.Name())
}

func typeArgsCode(args *types.TypeList) *jen.Statement {
	if args.Len() == 0 {
		return jen.Null()
	}
	codes := make([]jen.Code, args.Len())
	for i := range args.Len() {
		codes[i] = typeCode(args.At(i))
	}
	return jen.Types(codes...)
}

// signatureCode writes (params) results of a func type, without names.
func signatureCode(sig *types.Signature) *jen.Statement {
	params := make([]jen.Code, sig.Params().Len())
	for i := range sig.Params().Len() {
		pt := sig.Params().At(i).Type()
		if sig.Variadic() && i == sig.Params().Len()-1 {
			params[i] = jen.Op("...").Add(typeCode(pt.(*types.Slice).Elem()))
			continue
		}
		params[i] = typeCode(pt)
	}
	results := make([]jen.Code, sig.Results().Len())
	for i := range sig.Results().Len() {
		results[i] = typeCode(sig.Results().At(i).Type())
	}
	s := jen.Params(params...)
	switch len(results) {
	case 0:
	case 1:
		s = s.Add(results[0])
	default:
		s = s.Params(results...)
	}
	return s
}
