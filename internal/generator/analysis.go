package generator

import (
	"go/ast"
	"go/token"
	"go/types"
	"path/filepath"
	"sort"

	"golang.org/x/tools/go/packages"

	"github.com/lockgen/lockgen/internal/annotation"
	"github.com/lockgen/lockgen/templates"
)

// analysis checks one package and builds its output model.
type analysis struct {
	pkg        *packages.Package
	outputName string // the output file's base name, for messages
	outputPath string // never read as the user's code
	diags      []Diagnostic

	annotated    map[*types.Func]*annotatedMethod // this package's, by method
	foreign      map[*types.Func]*annotatedMethod // other packages' (nil entry: none), read on demand
	foreignFiles map[string]*ast.File
	keys         []keyUse // every key template, for checkKeyFamilies
	keyAt        map[token.Pos]bool
}

func newAnalysis(p *packages.Package, outputName string) *analysis {
	return &analysis{pkg: p, outputName: outputName, outputPath: filepath.Join(packageDir(p), outputName)}
}

func (a *analysis) errorf(pos token.Pos, msg string) {
	a.diags = append(a.diags, Diagnostic{Pos: a.pkg.Fset.Position(pos), Msg: msg})
}

// annotatedMethod is a method with its `//lock:` comments.
type annotatedMethod struct {
	fn       *types.Func
	name     *ast.Ident
	comments []*ast.Comment
	foreign  bool // declared in another package, reached through embedding
}

// run returns nil when the package has no annotated method.
func (a *analysis) run() *templates.File {
	byType := a.collect()
	if len(byType) == 0 {
		return nil
	}
	a.index(byType)
	types := make([]*types.TypeName, 0, len(byType))
	for tn := range byType {
		types = append(types, tn)
	}
	sort.Slice(types, func(i, j int) bool { return a.before(types[i].Pos(), types[j].Pos()) })

	imports := a.imports(types)
	reserved := make([]string, 0, len(imports))
	for _, imp := range imports {
		reserved = append(reserved, imp.Name)
	}
	f := &templates.File{PkgPath: a.pkg.PkgPath, PkgName: a.pkg.Name, Imports: imports}
	for _, tn := range types {
		if w, ok := a.wrapper(tn, reserved); ok {
			f.Wrappers = append(f.Wrappers, w)
		}
	}
	a.checkKeyFamilies()
	return f
}

// before orders positions by file name, then offset: token.Pos order across
// files depends on parse order, which go/packages does not fix.
func (a *analysis) before(x, y token.Pos) bool {
	px, py := a.pkg.Fset.Position(x), a.pkg.Fset.Position(y)
	if px.Filename != py.Filename {
		return px.Filename < py.Filename
	}
	return px.Offset < py.Offset
}

// collect finds every annotation of the package: those on methods are
// grouped by the method's named type; misplaced and misspelled ones are
// diagnosed (annotation.Scan reads every comment of every file, loaded or
// not).
func (a *analysis) collect() map[*types.TypeName][]annotatedMethod {
	byType, all := a.collectLoaded()
	a.scanOtherFiles(all, map[string]bool{a.outputPath: true})
	return byType
}

// collectLoaded is collect for the files of the load only.
func (a *analysis) collectLoaded() (map[*types.TypeName][]annotatedMethod, []annotation.Method) {
	byType := make(map[*types.TypeName][]annotatedMethod)
	info := a.pkg.TypesInfo
	var all []annotation.Method
	for _, file := range a.pkg.Syntax {
		methods, problems := annotation.Scan(file)
		all = append(all, methods...)
		for _, p := range problems {
			a.errorf(p.Pos, p.Msg)
		}
		for _, m := range methods {
			fn, _ := info.Defs[m.Name].(*types.Func)
			if fn == nil {
				a.errorf(m.Name.Pos(), "method "+m.Name.Name+": cannot resolve it with go/types")
				continue
			}
			var tn *types.TypeName
			if m.Interface != nil {
				tn, _ = info.Defs[m.Interface.Name].(*types.TypeName)
			} else {
				tn = receiverTypeName(fn)
			}
			if tn == nil {
				a.errorf(m.Name.Pos(), "method "+m.Name.Name+": cannot resolve its receiver type")
				continue
			}
			byType[tn] = append(byType[tn], annotatedMethod{fn: fn, name: m.Name, comments: m.Comments})
		}
	}
	return byType, all
}

// receiverTypeName is the named type a method is declared on (for interface
// methods, the interface's name).
func receiverTypeName(fn *types.Func) *types.TypeName {
	sig, ok := fn.Type().(*types.Signature)
	if !ok || sig.Recv() == nil {
		return nil
	}
	t := types.Unalias(sig.Recv().Type())
	if p, ok := t.(*types.Pointer); ok {
		t = types.Unalias(p.Elem())
	}
	if n, ok := t.(*types.Named); ok {
		return n.Origin().Obj()
	}
	return nil
}
