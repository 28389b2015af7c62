package generator

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/types"
	"path/filepath"

	"golang.org/x/tools/go/packages"
)

// recheckWithOutput type-checks every package again with its new output file
// parsed and added, so that calls through the generated wrappers are typed.
// It runs go/types in process on the syntax already loaded: a second
// packages.Load with an overlay would type-check every dependency from
// source (go/packages distrusts export data once an overlay is set), which
// costs far more than generation itself.
//
// Packages are checked in import order, and a package imports the rechecked
// version of another package of the run, so a wrapper of one package is
// typed in the packages that use it. Anything else comes from the export data
// of the first load. The check tolerates errors (an import that is not
// available leaves some types invalid; the calls that matter still resolve):
// the code compiled before, and the output is lockgen's own.
func recheckWithOutput(pkgs []*packages.Package, files []File, output string) []*packages.Package {
	content := make(map[string][]byte, len(files))
	for _, f := range files {
		content[f.Path] = f.Content
	}
	byPath := make(map[string]*packages.Package, len(pkgs))
	for _, p := range pkgs {
		byPath[p.PkgPath] = p
	}
	rechecked := make(map[string]*packages.Package, len(pkgs))
	var visit func(p *packages.Package)
	visit = func(p *packages.Package) {
		if _, done := rechecked[p.PkgPath]; done || p.Types == nil {
			return
		}
		rechecked[p.PkgPath] = p // placeholder: breaks import cycles, which the first load has reported anyway
		for _, imp := range p.Types.Imports() {
			if dep := byPath[imp.Path()]; dep != nil {
				visit(dep)
			}
		}
		path := filepath.Join(packageDir(p), output)
		rechecked[p.PkgPath] = recheck(p, path, content[path], rechecked)
	}
	out := make([]*packages.Package, 0, len(pkgs))
	for _, p := range pkgs {
		visit(p)
		if r := rechecked[p.PkgPath]; r != nil {
			out = append(out, r)
		}
	}
	return out
}

// recheck returns a copy of p type-checked with src (its new output file at
// path, nil for none) added to its files.
func recheck(p *packages.Package, path string, src []byte, rechecked map[string]*packages.Package) *packages.Package {
	syntax := p.Syntax
	if src != nil {
		f, err := parser.ParseFile(p.Fset, path, src, parser.SkipObjectResolution)
		if err != nil {
			return p // lockgen's own output always parses; keep the first load's view if not
		}
		syntax = append(append([]*ast.File(nil), p.Syntax...), f)
	}
	direct := make(map[string]*types.Package)
	for _, imp := range p.Types.Imports() {
		direct[imp.Path()] = imp
	}
	conf := types.Config{
		Importer: importerFunc(func(path string) (*types.Package, error) {
			if r := rechecked[path]; r != nil && r != p && r.Types != nil {
				return r.Types, nil
			}
			if imp := direct[path]; imp != nil {
				return imp, nil
			}
			return nil, errors.New("not loaded")
		}),
		Error: func(error) {}, // tolerated, see recheckWithOutput
	}
	info := &types.Info{
		Types:      make(map[ast.Expr]types.TypeAndValue),
		Defs:       make(map[*ast.Ident]types.Object),
		Uses:       make(map[*ast.Ident]types.Object),
		Selections: make(map[*ast.SelectorExpr]*types.Selection),
		Instances:  make(map[*ast.Ident]types.Instance),
	}
	tpkg, _ := conf.Check(p.PkgPath, p.Fset, syntax, info)
	np := *p
	np.Syntax, np.Types, np.TypesInfo, np.Errors = syntax, tpkg, info, nil
	return &np
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }
