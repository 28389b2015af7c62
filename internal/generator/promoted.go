package generator

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"strconv"

	"github.com/lockgen/lockgen/internal/annotation"
)

// Promoted methods. A wrapper has every exported method of *T, including
// those promoted from embedded fields (or, for an interface, from embedded
// interfaces). An annotated method reached that way locks in the wrapper
// just as it does in the wrapper of the type that declares it: the
// annotation belongs to the method, wherever it is called from.
//
// Annotations of this package are indexed by method (the generic origin, so
// that an instantiation such as Base[int].Do finds them). Those of a method
// declared in another package are read from that package's source, found
// through the method's position in the export data. When that source cannot
// be read while the package has a wrapper for the type (so the method may
// well be annotated), the method is refused: delegating could leave it
// unlocked.

// index records every annotated method of the package by its types.Func.
func (a *analysis) index(byType map[*types.TypeName][]annotatedMethod) {
	a.annotated = make(map[*types.Func]*annotatedMethod)
	for _, ams := range byType {
		for i := range ams {
			a.annotated[ams[i].fn] = &ams[i]
		}
	}
}

// annotationsOf returns fn's annotations, or nil when it has none. ok is
// false when they could not be determined (already diagnosed).
func (a *analysis) annotationsOf(fn *types.Func, tn *types.TypeName) (am *annotatedMethod, ok bool) {
	if am := a.annotated[fn.Origin()]; am != nil {
		return am, true
	}
	if fn.Pkg() == nil || fn.Pkg() == a.pkg.Types {
		return nil, true
	}
	return a.foreignAnnotations(fn, tn)
}

// foreignAnnotations reads the annotations of fn, a method declared in
// another package, from its source file.
func (a *analysis) foreignAnnotations(fn *types.Func, tn *types.TypeName) (*annotatedMethod, bool) {
	origin := fn.Origin()
	recv := receiverTypeName(origin)
	if recv == nil {
		return nil, true
	}
	if am, done := a.foreign[origin]; done {
		return am, am != nil || !hasWrapper(recv)
	}
	file := a.foreignFile(a.pkg.Fset.Position(origin.Pos()).Filename)
	var am *annotatedMethod
	if file != nil {
		methods, _ := annotation.Scan(file) // its own lockgen run reports its problems
		for _, m := range methods {
			if m.Recv == recv.Name() && m.Name.Name == origin.Name() {
				am = &annotatedMethod{fn: origin, name: m.Name, comments: m.Comments, foreign: true}
			}
		}
	}
	if a.foreign == nil {
		a.foreign = make(map[*types.Func]*annotatedMethod)
	}
	a.foreign[origin] = am
	if file == nil && hasWrapper(recv) {
		a.errorf(a.embeddingPos(tn, fn), tn.Name()+" has method "+fn.Name()+" from "+qualified(recv)+", which lockgen wraps in "+
			recv.Pkg().Name()+"."+recv.Name()+"Locked, but its source is not readable here (built with -trimpath?), so whether "+
			fn.Name()+" is annotated is unknown and "+tn.Name()+"Locked could leave it unlocked; build without -trimpath, or declare "+
			fn.Name()+" on "+tn.Name()+" and annotate it there")
		return nil, false
	}
	return am, true
}

// foreignFile parses a file of another package into the package's file set
// (so that its positions print like any other), once per run.
func (a *analysis) foreignFile(path string) *ast.File {
	if path == "" || !filepath.IsAbs(path) {
		return nil
	}
	if f, done := a.foreignFiles[path]; done {
		return f
	}
	f, err := parser.ParseFile(a.pkg.Fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		f = nil
	}
	if a.foreignFiles == nil {
		a.foreignFiles = make(map[string]*ast.File)
	}
	a.foreignFiles[path] = f
	return f
}

// hasWrapper reports whether tn's package declares lockgen's wrapper of tn,
// a sign that some method of tn is annotated.
func hasWrapper(tn *types.TypeName) bool {
	return tn.Pkg() != nil && tn.Pkg().Scope().Lookup(tn.Name()+"Locked") != nil
}

func qualified(tn *types.TypeName) string {
	if tn.Pkg() == nil {
		return tn.Name()
	}
	return tn.Pkg().Name() + "." + tn.Name()
}

// declaredOn reports whether fn is declared on tn itself (not promoted).
func declaredOn(fn *types.Func, tn *types.TypeName) bool {
	return receiverTypeName(fn.Origin()) == tn
}

// embeddingPos is the position of the embedded field (of tn's struct)
// through which fn is promoted, or of tn when there is none to point at.
func (a *analysis) embeddingPos(tn *types.TypeName, fn *types.Func) token.Pos {
	t := tn.Type()
	if !types.IsInterface(t) {
		t = types.NewPointer(t)
	}
	_, index, _ := types.LookupFieldOrMethod(t, true, a.pkg.Types, fn.Name())
	if st, ok := tn.Type().Underlying().(*types.Struct); ok && len(index) > 1 {
		return st.Field(index[0]).Pos()
	}
	return tn.Pos()
}

// foreignLocks checks the annotations of a method promoted from another
// package. Their problems are that package's to report; here they are
// folded into one diagnostic at the embedding, saying why this wrapper
// refuses the method.
func (a *analysis) foreignLocks(tn *types.TypeName, fn *types.Func, check func() bool) bool {
	before := len(a.diags)
	if check() {
		return true
	}
	inner := a.diags[before:]
	a.diags = a.diags[:before]
	first := inner[0]
	a.errorf(a.embeddingPos(tn, fn), tn.Name()+" has method "+fn.Name()+" from "+qualified(receiverTypeName(fn.Origin()))+
		", annotated in package "+fn.Pkg().Path()+" ("+filepath.Base(first.Pos.Filename)+":"+strconv.Itoa(first.Pos.Line)+")"+
		", but "+tn.Name()+"Locked cannot take that lock: "+first.Msg)
	return false
}
