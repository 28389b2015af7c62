package generator

import (
	"go/token"
	"go/types"

	"github.com/lockgen/lockgen/internal/annotation"
	"github.com/lockgen/lockgen/templates"
)

const acceptedTypes = "want a string, integer or bool type (or a pointer to one), a fmt.Stringer, an encoding.TextMarshaler, or a slice or array of those"

// Structural stand-ins for encoding.TextMarshaler and fmt.Stringer: the load
// does not type-check dependencies, and types.Implements only compares method
// sets.
var (
	textMarshaler = newInterface("MarshalText", types.NewTuple(),
		types.NewTuple(types.NewVar(token.NoPos, nil, "", types.NewSlice(types.Typ[types.Byte])),
			types.NewVar(token.NoPos, nil, "", types.Universe.Lookup("error").Type())))
	stringer = newInterface("String", types.NewTuple(),
		types.NewTuple(types.NewVar(token.NoPos, nil, "", types.Typ[types.String])))
)

func newInterface(method string, params, results *types.Tuple) *types.Interface {
	sig := types.NewSignatureType(nil, nil, nil, params, results, false)
	it := types.NewInterfaceType([]*types.Func{types.NewFunc(token.NoPos, nil, method, sig)}, nil)
	return it.Complete()
}

// placeholder resolves <root.sel...> against the method's parameters.
func (a *analysis) placeholder(ph *annotation.Placeholder, sig *types.Signature, params []templates.Var, at func(int) token.Pos) (*templates.Value, bool) {
	idx := -1
	for i := range sig.Params().Len() {
		if sig.Params().At(i).Name() == ph.Root {
			idx = i
		}
	}
	if idx < 0 {
		a.errorf(at(ph.Offset+1), "unknown placeholder <"+ph.Source+">: no parameter named "+ph.Root+" ("+paramList(params, sig)+")")
		return nil, false
	}
	v := &templates.Value{Source: ph.Source, Root: params[idx].Name}
	if sig.Variadic() && idx == sig.Params().Len()-1 && len(ph.Selectors) > 0 {
		a.errorf(at(ph.Selectors[0].Offset), "placeholder <"+ph.Source+">: "+ph.Root+" is variadic; use it whole (one key per element)")
		return nil, false
	}
	w := selectorWalk{t: sig.Params().At(idx).Type(), addressable: true, display: ph.Root}
	for _, sel := range ph.Selectors {
		if !a.selectOne(&w, v, ph, sel, at) {
			return nil, false
		}
	}
	if !a.format(v, w.t, w.addressable) {
		a.errorf(at(ph.Offset+1), "placeholder <"+ph.Source+"> has type "+a.typeString(w.t)+"; "+a.unsupported(w.t))
		return nil, false
	}
	return v, true
}

// selectorWalk is where a placeholder's selectors have got to: the type
// reached, whether a value of it is addressable (a pointer on the way
// makes it so, a method result does not), and how it reads in messages.
type selectorWalk struct {
	t           types.Type
	addressable bool
	display     string
}

// selectOne follows one selector of ph from w: a field or a method with
// no arguments and one result, through embedded fields, each pointer on
// the way a step of v checked for nil. It reports what it cannot follow.
func (a *analysis) selectOne(w *selectorWalk, v *templates.Value, ph *annotation.Placeholder, sel annotation.Selector, at func(int) token.Pos) bool {
	obj, index, indirect := types.LookupFieldOrMethod(w.t, w.addressable, a.pkg.Types, sel.Name)
	if obj == nil {
		a.errorf(at(sel.Offset), a.missingSelector(w, ph, sel, index != nil, indirect))
		return false
	}
	// Walk embedded fields explicitly so every pointer on the way is
	// checked for nil.
	for _, fi := range index[:len(index)-1] {
		st, _ := derefStruct(w.t)
		if st == nil {
			break
		}
		f := st.Field(fi)
		v.Steps = append(v.Steps, templates.Step{Name: f.Name(), NilCheck: nilable(w.t), Display: w.display})
		if _, isPtr := types.Unalias(w.t).Underlying().(*types.Pointer); isPtr {
			w.addressable = true
		}
		w.display += "." + f.Name()
		w.t = f.Type()
	}
	step := templates.Step{Name: sel.Name, Call: sel.Call, NilCheck: nilable(w.t), Display: w.display}
	if _, isPtr := types.Unalias(w.t).Underlying().(*types.Pointer); isPtr {
		w.addressable = true
	}
	switch obj := obj.(type) {
	case *types.Var:
		if sel.Call {
			a.errorf(at(sel.Offset), "placeholder <"+ph.Source+">: "+sel.Name+" is a field, not a method; write it without ()")
			return false
		}
		w.t = obj.Type()
		w.display += "." + sel.Name
	case *types.Func:
		// A method may be written without (), as text/template does.
		step.Call = true
		msig := obj.Type().(*types.Signature)
		if msig.Params().Len() != 0 || msig.Results().Len() != 1 {
			a.errorf(at(sel.Offset), "placeholder <"+ph.Source+">: method "+sel.Name+" must take no arguments and return exactly one value")
			return false
		}
		w.t = msig.Results().At(0).Type()
		w.addressable = false
		w.display += "." + sel.Name + "()"
	}
	v.Steps = append(v.Steps, step)
	return true
}

// missingSelector says why sel is not found on w's type (go/types'
// LookupFieldOrMethod: ambiguous, index set; indirect, a pointer method
// on a value that is not addressable): the name at the same depth of two
// embedded fields, a pointer method on a value, a name unexported in
// another package, or no such field or method.
func (a *analysis) missingSelector(w *selectorWalk, ph *annotation.Placeholder, sel annotation.Selector, ambiguous, indirect bool) string {
	switch {
	case indirect:
		return "placeholder <" + ph.Source + ">: method " + sel.Name + " has a pointer receiver but " + w.display + " is not addressable"
	case ambiguous:
		return "placeholder <" + ph.Source + ">: " + sel.Name + " is ambiguous in " + w.display + " (type " + a.typeString(w.t) + "): embedded fields at the same depth both provide it; select it through the embedded field meant"
	}
	if p := a.otherPackageDeclaring(w.t, sel.Name); p != nil {
		return "placeholder <" + ph.Source + ">: " + sel.Name + " is unexported in package " + p.Path() + ", so the wrapper in package " + a.pkg.Types.Path() + " cannot read it"
	}
	return "placeholder <" + ph.Source + ">: " + w.display + " (type " + a.typeString(w.t) + ") has no field or method " + sel.Name
}

// format picks how a value of type t is rendered; false when it cannot be.
func (a *analysis) format(v *templates.Value, t types.Type, addressable bool) bool {
	if f, conv, ok := basicFormat(t); ok {
		v.Format, v.Convert = f, conv
		return true
	}
	if p, ok := types.Unalias(t).(*types.Pointer); ok {
		if f, conv, ok := basicFormat(p.Elem()); ok {
			v.Format, v.Convert, v.Deref, v.NilCheck = f, conv, true, true
			return true
		}
	}
	if f, ok := methodFormat(t, addressable); ok {
		v.Format, v.NilCheck = f, nilable(t)
		return true
	}
	var elem types.Type
	switch u := types.Unalias(t).Underlying().(type) {
	case *types.Slice:
		elem = u.Elem()
	case *types.Array:
		elem = u.Elem()
	default:
		return false
	}
	if b, ok := types.Unalias(elem).(*types.Basic); ok && b.Kind() == types.Byte {
		return false // []byte would lock one key per byte; the message lists what works
	}
	v.Slice = true
	if f, conv, ok := basicFormat(elem); ok {
		v.Format, v.Convert = f, conv
		return true
	}
	if f, ok := methodFormat(elem, true); ok {
		v.Format, v.NilCheck = f, nilable(elem)
		return true
	}
	return false
}

// basicFormat: string, integer and bool underlying types; conv says a
// conversion to the strconv/escape argument type is needed.
func basicFormat(t types.Type) (templates.Format, bool, bool) {
	if tp, ok := types.Unalias(t).(*types.TypeParam); ok {
		f, ok := typeSetFormat(tp.Constraint())
		return f, true, ok // always converted: string(v), int64(v), ...
	}
	b, ok := types.Unalias(t).Underlying().(*types.Basic)
	if !ok {
		return 0, false, false
	}
	named := !types.Identical(types.Unalias(t), types.Typ[b.Kind()])
	switch b.Kind() {
	case types.String:
		return templates.FormatString, named, true
	case types.Int, types.Int8, types.Int16, types.Int32:
		return templates.FormatInt, true, true
	case types.Int64:
		return templates.FormatInt, named, true
	case types.Uint, types.Uint8, types.Uint16, types.Uint32:
		return templates.FormatUint, true, true
	case types.Uint64:
		return templates.FormatUint, named, true
	case types.Bool:
		return templates.FormatBool, named, true
	}
	return 0, false, false
}

func methodFormat(t types.Type, addressable bool) (templates.Format, bool) {
	if types.Implements(t, textMarshaler) {
		return templates.FormatText, true
	}
	if types.Implements(t, stringer) {
		return templates.FormatStringer, true
	}
	if _, isPtr := t.Underlying().(*types.Pointer); addressable && !isPtr && types.Implements(types.NewPointer(t), stringer) {
		return templates.FormatStringer, true // v.String() takes &v implicitly
	}
	return 0, false
}

func nilable(t types.Type) bool {
	if _, ok := types.Unalias(t).(*types.TypeParam); ok {
		return false // a type parameter cannot be compared with nil
	}
	switch types.Unalias(t).Underlying().(type) {
	case *types.Pointer, *types.Interface:
		return true
	}
	return false
}

func derefStruct(t types.Type) (*types.Struct, bool) {
	u := types.Unalias(t).Underlying()
	if p, ok := u.(*types.Pointer); ok {
		u = types.Unalias(p.Elem()).Underlying()
	}
	st, ok := u.(*types.Struct)
	return st, ok
}

func (a *analysis) typeString(t types.Type) string {
	return types.TypeString(t, types.RelativeTo(a.pkg.Types))
}

// otherPackageDeclaring returns the package, other than this one, whose
// unexported field or method name t has; nil when there is none.
func (a *analysis) otherPackageDeclaring(t types.Type, name string) *types.Package {
	if token.IsExported(name) {
		return nil
	}
	if p, ok := types.Unalias(t).(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := types.Unalias(t).(*types.Named)
	if !ok || n.Obj().Pkg() == nil || n.Obj().Pkg() == a.pkg.Types {
		return nil
	}
	if obj, _, _ := types.LookupFieldOrMethod(t, true, n.Obj().Pkg(), name); obj == nil {
		return nil
	}
	return n.Obj().Pkg()
}
