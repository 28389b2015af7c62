package generator

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"

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
		if errs := blockingErrors(p); len(errs) > 0 {
			for _, e := range errs {
				diags = append(diags, packageErrorDiagnostic(e))
			}
			continue
		}
		a := newAnalysis(p)
		model := a.run()
		diags = append(diags, a.diags...)
		out := filepath.Join(packageDir(p), cfg.Output)
		if model == nil {
			if previous[out] {
				files = append(files, File{Path: out})
			}
			continue
		}
		if !previous[out] {
			if _, err := os.Stat(out); err == nil {
				diags = append(diags, Diagnostic{Pos: positionOfFile(out), Msg: "refusing to overwrite " + filepath.Base(out) + ": it exists and was not written by lockgen (its first line is not \"" + templates.Header + "\")"})
				continue
			}
		}
		if len(a.diags) > 0 {
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

// Stale reports whether the file on disk differs from f (for -check).
func Stale(f File) (bool, error) {
	old, err := os.ReadFile(f.Path)
	if errors.Is(err, os.ErrNotExist) {
		return f.Content != nil, nil
	}
	if err != nil {
		return false, err
	}
	return f.Content == nil || !bytes.Equal(old, f.Content), nil
}
