package generator

import (
	"go/types"

	"github.com/lockgen/lockgen/templates"
)

// typeSetFormat decides how a value of a type parameter with the given
// constraint is rendered when its type set holds only string types, only
// signed integers, only unsigned integers or only bools: then string(v),
// int64(v), uint64(v) or bool(v) compiles for every type argument.
//
// A type set is the intersection of the constraint's embedded elements, so
// one element whose terms all fall in one class is enough: every type of the
// set is in it. Method-only constraints (String, MarshalText) are handled by
// methodFormat, which go/types answers for type parameters too.
func typeSetFormat(constraint types.Type) (templates.Format, bool) {
	it, ok := constraint.Underlying().(*types.Interface)
	if !ok {
		return 0, false
	}
	for i := range it.NumEmbeddeds() {
		if f, ok := elementFormat(it.EmbeddedType(i)); ok {
			return f, true
		}
	}
	return 0, false
}

// elementFormat classifies one embedded element: a union, a single type, or
// an interface (whose own type set is classified).
func elementFormat(t types.Type) (templates.Format, bool) {
	switch t := t.(type) {
	case *types.Union:
		var common templates.Format
		for i := range t.Len() {
			f, ok := elementFormat(t.Term(i).Type())
			if !ok || (common != 0 && f != common) {
				return 0, false
			}
			common = f
		}
		return common, common != 0
	}
	if _, ok := t.Underlying().(*types.Interface); ok {
		return typeSetFormat(t)
	}
	f, _, ok := basicFormat(t)
	return f, ok
}

// unsupported explains why a placeholder's type cannot be rendered and
// what would work instead.
func (a *analysis) unsupported(t types.Type) string {
	u := types.Unalias(t).Underlying()
	var elem types.Type
	switch u := u.(type) {
	case *types.Slice:
		elem = u.Elem()
	case *types.Array:
		elem = u.Elem()
	}
	if b, ok := types.Unalias(elem).(*types.Basic); ok && b.Kind() == types.Byte {
		return "byte slices and arrays are not rendered (each byte would lock a key of its own); convert the bytes to a string: a string parameter, or a named type with a String or MarshalText method"
	}
	tp, ok := types.Unalias(t).(*types.TypeParam)
	if elem != nil {
		tp, ok = types.Unalias(elem).(*types.TypeParam)
	}
	if ok {
		return tp.Obj().Name() + " is a type parameter constrained by " + a.typeString(tp.Constraint()) +
			", whose type set allows types lockgen cannot render; constrain it to string types (~string), to integer types of one signedness (~int64, ~int | ~int32), to bool, or by a constraint with String() string or MarshalText() ([]byte, error)"
	}
	return acceptedTypes
}
