package generator

import (
	"go/ast"
	"go/parser"
	"go/types"
	"path/filepath"
	"sort"
	"strings"

	"github.com/lockgen/lockgen/internal/annotation"
)

// scanOtherFiles reads the comments of the package's Go files that the load
// leaves out: its _test.go files, and files excluded from this build by a
// build constraint or a GOOS/GOARCH file name. An annotation there would be
// silently ignored: lock_gen.go is one non-test file for every build,
// written from the build lockgen loads.
//
// An annotated method in an excluded file is accepted when the loaded build
// declares the same method with the same annotation lines (platform
// variants of one method); test files can never be wrapped. skip holds the
// files not to read (lockgen's own earlier output).
func (a *analysis) scanOtherFiles(built []annotation.Method, skip map[string]bool) {
	dir := packageDir(a.pkg)
	if dir == "" {
		return
	}
	inBuild := make(map[string]string) // Recv.Method -> its annotation lines
	for _, m := range built {
		inBuild[m.Recv+"."+m.Name.Name] = commentTexts(m.Comments)
	}
	tests, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
	var files []string
	for _, f := range append(append([]string{}, a.pkg.IgnoredFiles...), tests...) {
		if strings.HasSuffix(f, ".go") && !skip[f] {
			files = append(files, f)
		}
	}
	sort.Strings(files)
	for i, f := range files {
		if i > 0 && files[i-1] == f {
			continue // a test file excluded by a constraint is in both lists
		}
		a.scanOtherFile(f, inBuild)
	}
}

func (a *analysis) scanOtherFile(path string, inBuild map[string]string) {
	file, _ := parser.ParseFile(a.pkg.Fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
	if file == nil || !a.samePackage(file) {
		return // unreadable, or another package in the directory (a //go:build ignore program)
	}
	methods, problems := annotation.Scan(file)
	for _, p := range problems {
		a.errorf(p.Pos, p.Msg)
	}
	test := strings.HasSuffix(path, "_test.go")
	for _, m := range methods {
		name := m.Recv + "." + m.Name.Name
		switch {
		case test:
			a.errorf(m.Comments[0].Slash, "//lock: annotation in a test file: "+a.outputName+" is not a test file, so it cannot wrap "+name+
				"; declare the method in a non-test file, or take the lock with the runtime API (Locker.Acquire)")
		case inBuild[name] != commentTexts(m.Comments):
			a.errorf(m.Comments[0].Slash, "//lock: annotation in a file excluded from this build (by its build constraint or GOOS/GOARCH file name): "+
				a.outputName+" serves every build but is generated from this one, where "+name+" "+a.buildVariant(inBuild, m)+
				"; declare the method in every build, each variant with the same //lock: lines")
		}
	}
}

// buildVariant says what the loaded build has instead of the annotated
// method m of an excluded file.
func (a *analysis) buildVariant(inBuild map[string]string, m annotation.Method) string {
	if _, ok := inBuild[m.Recv+"."+m.Name.Name]; ok {
		return "has other //lock: lines"
	}
	tn, _ := a.pkg.Types.Scope().Lookup(m.Recv).(*types.TypeName)
	if tn == nil {
		return "does not exist"
	}
	t := tn.Type()
	if !types.IsInterface(t) {
		t = types.NewPointer(t)
	}
	if obj, _, _ := types.LookupFieldOrMethod(t, true, a.pkg.Types, m.Name.Name); obj == nil {
		return "does not exist"
	}
	return "is not annotated"
}

// samePackage reports whether file belongs to the package or to its
// external test package.
func (a *analysis) samePackage(file *ast.File) bool {
	n := file.Name.Name
	return n == a.pkg.Name || n == a.pkg.Name+"_test"
}

func commentTexts(cs []*ast.Comment) string {
	var b strings.Builder
	for _, c := range cs {
		b.WriteString(strings.TrimSpace(c.Text))
		b.WriteByte('\n')
	}
	return b.String()
}
