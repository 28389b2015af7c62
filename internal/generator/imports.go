package generator

import (
	"go/types"
	"sort"
	"strconv"

	"github.com/lockgen/lockgen/templates"
)

// Packages the generated bodies may refer to, with their names.
var bodyImports = []templates.Import{
	{Path: "github.com/lockgen/lockgen/runtime", Name: "runtime"},
	{Path: "context", Name: "context"},
	{Path: "strconv", Name: "strconv"},
	{Path: "time", Name: "time"},
}

// imports fixes the name of every package the output may mention: the body
// imports first, then the packages of the wrapped methods' signatures, sorted
// by path. A name taken by a package-level declaration of the user's package,
// or by an earlier import, gets an alias with a numeric suffix, so the file
// never depends on jennifer guessing.
func (a *analysis) imports(wrapped []*types.TypeName) []templates.Import {
	paths := make(map[string]string) // path -> package name
	for _, tn := range wrapped {
		named, ok := tn.Type().(*types.Named)
		if !ok {
			continue
		}
		collect := func(t types.Type) { collectPackages(t, paths, make(map[types.Type]bool)) }
		if it, ok := named.Underlying().(*types.Interface); ok {
			for i := range it.NumMethods() {
				collect(it.Method(i).Type())
			}
		} else {
			ms := types.NewMethodSet(types.NewPointer(named))
			for i := range ms.Len() {
				collect(ms.At(i).Obj().Type())
			}
		}
		for i := range named.TypeParams().Len() {
			collect(named.TypeParams().At(i).Constraint())
		}
	}
	delete(paths, a.pkg.PkgPath)

	var out []templates.Import
	taken := make(map[string]bool)
	add := func(path, name string) {
		alias := name
		for i := 2; taken[alias] || a.pkg.Types.Scope().Lookup(alias) != nil; i++ {
			alias = name + strconv.Itoa(i)
		}
		taken[alias] = true
		out = append(out, templates.Import{Path: path, Name: alias, Alias: alias != name})
	}
	for _, imp := range bodyImports {
		add(imp.Path, imp.Name)
		delete(paths, imp.Path)
	}
	rest := make([]string, 0, len(paths))
	for p := range paths {
		rest = append(rest, p)
	}
	sort.Strings(rest)
	for _, p := range rest {
		add(p, paths[p])
	}
	return out
}

func collectPackages(t types.Type, out map[string]string, seen map[types.Type]bool) {
	if t == nil || seen[t] {
		return
	}
	seen[t] = true
	rec := func(t types.Type) { collectPackages(t, out, seen) }
	switch t := t.(type) {
	case *types.Alias:
		if p := t.Obj().Pkg(); p != nil {
			out[p.Path()] = p.Name()
		}
		for i := range t.TypeArgs().Len() {
			rec(t.TypeArgs().At(i))
		}
	case *types.Named:
		if p := t.Obj().Pkg(); p != nil {
			out[p.Path()] = p.Name()
		}
		for i := range t.TypeArgs().Len() {
			rec(t.TypeArgs().At(i))
		}
	case *types.Pointer:
		rec(t.Elem())
	case *types.Slice:
		rec(t.Elem())
	case *types.Array:
		rec(t.Elem())
	case *types.Map:
		rec(t.Key())
		rec(t.Elem())
	case *types.Chan:
		rec(t.Elem())
	case *types.Signature:
		for i := range t.Params().Len() {
			rec(t.Params().At(i).Type())
		}
		for i := range t.Results().Len() {
			rec(t.Results().At(i).Type())
		}
	case *types.Struct:
		for i := range t.NumFields() {
			rec(t.Field(i).Type())
		}
	case *types.Interface:
		for i := range t.NumEmbeddeds() {
			rec(t.EmbeddedType(i))
		}
		for i := range t.NumExplicitMethods() {
			rec(t.ExplicitMethod(i).Type())
		}
	case *types.Union:
		for i := range t.Len() {
			rec(t.Term(i).Type())
		}
	case *types.Basic:
		if t.Kind() == types.UnsafePointer {
			out["unsafe"] = "unsafe"
		}
	}
}
