package templates

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"sort"
	"strconv"
	"strings"
)

// groupImports rewrites the import block of src, as jennifer renders it (one
// block sorted by path), into the groups gofmt users and goimports expect:
// the standard library first, then a blank line, then everything else, each
// group sorted by path. It decides from the paths alone, as goimports does
// (a first path element without a dot is the standard library), so it never
// scans GOROOT or the module cache. A file with fewer than two imports, or
// with one group only, is returned unchanged.
func groupImports(src []byte) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.ImportsOnly)
	if err != nil {
		return nil, err
	}
	decl := importDecl(f)
	if decl == nil || !decl.Lparen.IsValid() {
		return src, nil
	}
	var std, other []*ast.ImportSpec
	for _, spec := range decl.Specs {
		is := spec.(*ast.ImportSpec)
		path, err := strconv.Unquote(is.Path.Value)
		if err != nil {
			return nil, err
		}
		if isStandardLibrary(path) {
			std = append(std, is)
		} else {
			other = append(other, is)
		}
	}
	var b bytes.Buffer
	b.WriteString("import (\n")
	writeImportGroup(&b, std)
	if len(std) > 0 && len(other) > 0 {
		b.WriteByte('\n')
	}
	writeImportGroup(&b, other)
	b.WriteString(")")

	start, end := fset.Position(decl.Pos()).Offset, fset.Position(decl.End()).Offset
	out := make([]byte, 0, len(src)+1)
	out = append(out, src[:start]...)
	out = append(out, b.Bytes()...)
	return append(out, src[end:]...), nil
}

// importDecl is the file's only import declaration (jennifer writes one), or
// nil when there is none.
func importDecl(f *ast.File) *ast.GenDecl {
	for _, d := range f.Decls {
		if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.IMPORT {
			return gd
		}
	}
	return nil
}

// writeImportGroup writes one gofmt-formatted line per spec, sorted by path.
func writeImportGroup(b *bytes.Buffer, specs []*ast.ImportSpec) {
	sort.SliceStable(specs, func(i, j int) bool { return specs[i].Path.Value < specs[j].Path.Value })
	for _, is := range specs {
		b.WriteByte('\t')
		if is.Name != nil {
			b.WriteString(is.Name.Name + " ")
		}
		b.WriteString(is.Path.Value + "\n")
	}
}

// isStandardLibrary is goimports' rule: standard library paths have no dot
// in their first element.
func isStandardLibrary(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}
