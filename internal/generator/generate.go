package generator

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/tools/go/packages"

	"github.com/lockgen/lockgen/internal/annotation"
	"github.com/lockgen/lockgen/templates"
)

// Generate loads the packages of cfg and returns one File per package that
// needs writing, plus every problem found in any of them. When diagnostics
// are returned, files must not be written. The error is for failures that are
// not the user's code (the go command could not run, a bad Config).
func Generate(cfg Config) ([]File, []Diagnostic, error) {
	if cfg.Output == "" {
		cfg.Output = DefaultOutput
	}
	if err := ValidOutputName(cfg.Output); err != nil {
		return nil, nil, err
	}
	pkgs, previous, err := load(cfg)
	if err != nil {
		return nil, nil, err
	}
	var files []File
	var diags []Diagnostic
	for _, p := range pkgs {
		out := filepath.Join(packageDir(p), cfg.Output)
		// A file at the output path that lockgen did not write is the one
		// problem to report about it: what it declares (often an earlier
		// output whose header line was removed) would otherwise also show
		// up as clashes with the names lockgen declares, or as compile errors.
		foreign := !previous[out] && fileExists(out)
		if foreign && hasAnnotations(p, out) {
			diags = append(diags, refusal(out))
		}
		var blocking []packages.Error
		for _, e := range blockingErrors(p) {
			if !foreign || packageErrorDiagnostic(e).Pos.Filename != out {
				blocking = append(blocking, e)
			}
		}
		if len(blocking) > 0 {
			for _, e := range blocking {
				diags = append(diags, packageErrorDiagnostic(e))
			}
			continue
		}
		a := newAnalysis(p, cfg.Output)
		model := a.run()
		diags = append(diags, a.diags...)
		if model == nil {
			if previous[out] {
				files = append(files, File{Path: out})
			}
			continue
		}
		if foreign || len(a.diags) > 0 {
			continue
		}
		src, err := templates.Render(model)
		if err != nil {
			// A render error means lockgen produced invalid Go: a bug in
			// lockgen, reported against the package rather than hidden.
			return nil, nil, errors.New("lockgen: rendering " + p.PkgPath + ": " + err.Error())
		}
		files = append(files, File{Path: out, Content: src})
	}
	if len(diags) == 0 {
		diags = checkLockOrder(cfg, pkgs, files)
	}
	return files, sortDiagnostics(diags), nil
}

// ValidOutputName accepts a plain Go file name: the output lands in each
// package's own directory, so a path would be ambiguous with several packages.
func ValidOutputName(name string) error {
	switch {
	case strings.ContainsAny(name, `/\`):
		return errors.New("output must be a file name without a directory, got " + name)
	case !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || name == ".go":
		return errors.New("output must be a non-test .go file name, got " + name)
	}
	return nil
}

// Stale says how the file on disk differs from f (for -check): "" when it
// is current, else "missing", "out of date", or "no longer needed" (lockgen
// output for a package that has no annotations left).
func Stale(f File) (string, error) {
	old, err := os.ReadFile(f.Path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if f.Content == nil {
			return "", nil
		}
		return "missing", nil
	case err != nil:
		return "", err
	case f.Content == nil:
		return "no longer needed (the package has no annotations left)", nil
	case !bytes.Equal(old, f.Content):
		return "out of date", nil
	}
	return "", nil
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func refusal(out string) Diagnostic {
	name := filepath.Base(out)
	return Diagnostic{Pos: positionOfFile(out), Msg: "refusing to overwrite " + name + ": it exists and was not written by lockgen (its first line is not \"" +
		templates.Header + "\"); if lockgen wrote it, delete it or restore that line; otherwise choose another output name with -o"}
}

// hasAnnotations reports whether a file of p other than skip holds an
// annotation line (by spelling only: the package need not type-check).
func hasAnnotations(p *packages.Package, skip string) bool {
	for _, f := range p.Syntax {
		if p.Fset.Position(f.Pos()).Filename == skip {
			continue
		}
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				if annotation.Is(c.Text) {
					return true
				}
			}
		}
	}
	return false
}
