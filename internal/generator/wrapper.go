package generator

import (
	"go/types"
	"strconv"

	"github.com/lockgen/lockgen/templates"
)

// wrapper builds the model of TLocked for the named type tn.
func (a *analysis) wrapper(tn *types.TypeName, reserved []string) (templates.Wrapper, bool) {
	named, ok := tn.Type().(*types.Named)
	if !ok {
		a.errorf(tn.Pos(), "type "+tn.Name()+" is an alias; annotate the methods of the type it stands for")
		return templates.Wrapper{}, false
	}
	w := templates.Wrapper{TypeName: tn.Name()}
	_, w.Interface = named.Underlying().(*types.Interface)
	ok = a.checkGeneratedNames(tn, &w)

	var declTParams []string
	for i := range named.TypeParams().Len() {
		tp := named.TypeParams().At(i)
		w.TypeParams = append(w.TypeParams, templates.TypeParam{Name: tp.Obj().Name(), Constraint: tp.Constraint()})
		declTParams = append(declTParams, tp.Obj().Name())
	}

	methods, listOK := a.wrapperMethods(tn, named, w.Interface)
	ok = ok && listOK
	for _, wm := range methods {
		fn, am := wm.fn, wm.am
		sig := fn.Type().(*types.Signature)
		recvTParams := declTParams
		if rtp := sig.RecvTypeParams(); rtp.Len() > 0 && !w.Interface && declaredOn(fn, tn) {
			recvTParams = nil
			for i := range rtp.Len() {
				recvTParams = append(recvTParams, rtp.At(i).Obj().Name())
			}
		}
		names := methodNames(reserved, recvTParams)
		m := templates.Method{Name: fn.Name(), Recv: "w", RecvTypeParams: recvTParams, Variadic: sig.Variadic(), Names: names}
		m.Params = a.params(sig, names, am != nil)
		if am == nil {
			for i := range sig.Results().Len() {
				m.Results = append(m.Results, templates.Var{Type: sig.Results().At(i).Type()})
			}
			w.Methods = append(w.Methods, m)
			continue
		}
		var lk *templates.Locked
		check := func() bool {
			sigOK := a.checkSignature(am, sig)
			var lockOK bool
			lk, lockOK = a.locks(am, sig, m.Params)
			return sigOK && lockOK
		}
		if am.foreign && !a.foreignLocks(tn, fn, check) || !am.foreign && !check() {
			ok = false
			continue
		}
		m.Results = a.results(sig, names)
		m.Locked = lk
		w.Methods = append(w.Methods, m)
	}
	return w, ok
}

// wrapperMethod is one method of a wrapper with its annotations (nil: it
// delegates).
type wrapperMethod struct {
	fn *types.Func
	am *annotatedMethod
}

// methodNames is the namespace of one wrapper method's generated code:
// the names the file reserves, the receiver's type parameters, and the
// wrapper's own locals, which a parameter must not shadow.
func methodNames(reserved, recvTParams []string) *templates.Names {
	names := templates.NewNames(reserved...)
	for _, n := range recvTParams {
		names.Reserve(n)
	}
	for _, n := range []string{"w", "held", "err", "locks"} {
		names.Reserve(n)
	}
	return names
}

// wrapperMethods lists the wrapper's methods in a fixed order (by name, as
// go/types sorts method sets): for an interface all its methods; for a
// concrete type every exported method of *T, plus annotated unexported
// ones. Promoted methods keep their annotations. ok is false when the
// annotations of one could not be determined (diagnosed).
func (a *analysis) wrapperMethods(tn *types.TypeName, named *types.Named, isInterface bool) ([]wrapperMethod, bool) {
	var fns []*types.Func
	if isInterface {
		it := named.Underlying().(*types.Interface)
		for i := range it.NumMethods() {
			fns = append(fns, it.Method(i))
		}
	} else {
		ms := types.NewMethodSet(types.NewPointer(named))
		for i := range ms.Len() {
			if fn, ok := ms.At(i).Obj().(*types.Func); ok {
				fns = append(fns, fn)
			}
		}
	}
	ok := true
	var out []wrapperMethod
	for _, fn := range fns {
		if !fn.Exported() && fn.Pkg() != a.pkg.Types {
			continue // not callable from this package
		}
		am, known := a.annotationsOf(fn, tn)
		ok = ok && known
		if isInterface || fn.Exported() || am != nil {
			out = append(out, wrapperMethod{fn: fn, am: am})
		}
	}
	return out, ok
}

// checkGeneratedNames diagnoses user declarations that the generated names
// would clash with.
func (a *analysis) checkGeneratedNames(tn *types.TypeName, w *templates.Wrapper) bool {
	ok := true
	scope := a.pkg.Types.Scope()
	for _, name := range []string{w.Name(), w.ConstructorName()} {
		obj := scope.Lookup(name)
		if obj == nil {
			continue
		}
		ok = false
		if a.pkg.Fset.Position(obj.Pos()).Filename == a.outputPath {
			continue // a file lockgen did not write sits at the output path: reported once, as such
		}
		a.errorf(tn.Pos(), "lockgen would declare "+name+" for "+tn.Name()+", but "+name+" is already declared at "+a.shortPosition(obj.Pos()))
	}
	return ok
}

// params names the wrapper's parameters: the user's names unless they
// collide with an import, a type parameter or a wrapper local; unnamed and
// blank ones get ctx (first parameter of an annotated method) or p<i>.
func (a *analysis) params(sig *types.Signature, names *templates.Names, annotated bool) []templates.Var {
	var out []templates.Var
	for i := range sig.Params().Len() {
		p := sig.Params().At(i)
		base := p.Name()
		if base == "" || base == "_" {
			base = "p" + strconv.Itoa(i)
			if i == 0 && annotated {
				base = "ctx"
			}
		}
		out = append(out, templates.Var{Name: names.Fresh(base), Type: p.Type()})
	}
	return out
}

// results names every result: the error result is err (reserved for it),
// others keep the user's name or get r<i>.
func (a *analysis) results(sig *types.Signature, names *templates.Names) []templates.Var {
	n := sig.Results().Len()
	out := make([]templates.Var, n)
	for i := range n {
		r := sig.Results().At(i)
		switch {
		case i == n-1:
			out[i] = templates.Var{Name: "err", Type: r.Type()}
		case r.Name() != "" && r.Name() != "_":
			out[i] = templates.Var{Name: names.Fresh(r.Name()), Type: r.Type()}
		default:
			out[i] = templates.Var{Name: names.Fresh("r" + strconv.Itoa(i)), Type: r.Type()}
		}
	}
	return out
}

// checkSignature: context.Context first, error last, decided by go/types.
func (a *analysis) checkSignature(am *annotatedMethod, sig *types.Signature) bool {
	ok := true
	if sig.Params().Len() == 0 || !isContext(sig.Params().At(0).Type()) {
		a.errorf(am.name.Pos(), "method "+am.name.Name+" is annotated with //lock: but its first parameter is not context.Context (the wrapper passes the lock holder's context there)")
		ok = false
	}
	if n := sig.Results().Len(); n == 0 || !types.Identical(sig.Results().At(n-1).Type(), types.Universe.Lookup("error").Type()) {
		a.errorf(am.name.Pos(), "method "+am.name.Name+" is annotated with //lock: but its last result is not error (the wrapper reports lock failures there)")
		ok = false
	}
	return ok
}

func isContext(t types.Type) bool {
	n, ok := types.Unalias(t).(*types.Named)
	if !ok {
		return false
	}
	obj := n.Obj()
	return obj.Pkg() != nil && obj.Pkg().Path() == "context" && obj.Name() == "Context"
}
