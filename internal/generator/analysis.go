package generator

import (
	"go/ast"
	"go/token"
	"go/types"
	"sort"

	"golang.org/x/tools/go/packages"

	"github.com/lockgen/lockgen/internal/annotation"
	"github.com/lockgen/lockgen/templates"
)

// analysis checks one package and builds its output model.
type analysis struct {
	pkg   *packages.Package
	diags []Diagnostic
}

func newAnalysis(p *packages.Package) *analysis { return &analysis{pkg: p} }

func (a *analysis) errorf(pos token.Pos, msg string) {
	a.diags = append(a.diags, Diagnostic{Pos: a.pkg.Fset.Position(pos), Msg: msg})
}

// annotatedMethod is a method with its `//lock:` comments.
type annotatedMethod struct {
	fn       *types.Func
	name     *ast.Ident
	comments []*ast.Comment
}

// run returns nil when the package has no annotated method.
func (a *analysis) run() *templates.File {
	byType := a.collect()
	if len(byType) == 0 {
		return nil
	}
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
		if w, ok := a.wrapper(tn, byType[tn], reserved); ok {
			f.Wrappers = append(f.Wrappers, w)
		}
	}
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

// collect finds every annotation comment; those on methods are grouped by the
// method's named type, all others are diagnosed.
func (a *analysis) collect() map[*types.TypeName][]annotatedMethod {
	byType := make(map[*types.TypeName][]annotatedMethod)
	used := make(map[*ast.Comment]bool)
	annotations := func(doc *ast.CommentGroup) []*ast.Comment {
		if doc == nil {
			return nil
		}
		var out []*ast.Comment
		for _, c := range doc.List {
			if annotation.Is(c.Text) {
				out = append(out, c)
				used[c] = true
			}
		}
		return out
	}
	info := a.pkg.TypesInfo
	for _, file := range a.pkg.Syntax {
		for _, decl := range file.Decls {
			switch decl := decl.(type) {
			case *ast.FuncDecl:
				cs := annotations(decl.Doc)
				if len(cs) == 0 {
					continue
				}
				fn, _ := info.Defs[decl.Name].(*types.Func)
				if decl.Recv == nil || fn == nil {
					a.errorf(cs[0].Slash, "//lock: annotation on function "+decl.Name.Name+": annotations belong in the doc comment of a method (of a concrete or interface type)")
					continue
				}
				tn := receiverTypeName(fn)
				if tn == nil {
					a.errorf(decl.Name.Pos(), "method "+decl.Name.Name+": cannot resolve its receiver type")
					continue
				}
				byType[tn] = append(byType[tn], annotatedMethod{fn: fn, name: decl.Name, comments: cs})
			case *ast.GenDecl:
				for _, spec := range decl.Specs {
					ts, ok := spec.(*ast.TypeSpec)
					if !ok {
						continue
					}
					if cs := annotations(ts.Doc); len(cs) > 0 {
						a.errorf(cs[0].Slash, "//lock: annotation on type "+ts.Name.Name+": annotations belong in the doc comment of a method")
					}
					if len(decl.Specs) != 1 {
						// a grouped declaration's doc belongs to no single type
					} else if cs := annotations(decl.Doc); len(cs) > 0 {
						a.errorf(cs[0].Slash, "//lock: annotation on type "+ts.Name.Name+": annotations belong in the doc comment of a method")
					}
					it, ok := ts.Type.(*ast.InterfaceType)
					if !ok {
						continue
					}
					tn, _ := info.Defs[ts.Name].(*types.TypeName)
					for _, field := range it.Methods.List {
						cs := annotations(field.Doc)
						if len(cs) == 0 {
							continue
						}
						if len(field.Names) == 0 {
							a.errorf(cs[0].Slash, "//lock: annotation on an embedded interface: annotate the methods where that interface declares them")
							continue
						}
						fn, _ := info.Defs[field.Names[0]].(*types.Func)
						if fn == nil || tn == nil {
							continue
						}
						byType[tn] = append(byType[tn], annotatedMethod{fn: fn, name: field.Names[0], comments: cs})
					}
				}
			}
		}
		for _, cg := range file.Comments {
			for _, c := range cg.List {
				if annotation.Is(c.Text) && !used[c] {
					a.errorf(c.Slash, "//lock: annotation is not in the doc comment of a method, so it would have no effect")
				}
			}
		}
	}
	return byType
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
