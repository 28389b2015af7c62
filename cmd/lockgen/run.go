package main

import (
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/lockgen/lockgen/internal/generator"
)

// Exit codes.
const (
	exitOK       = 0
	exitProblems = 1 // diagnostics, stale output under -check, or a failed write
	exitUsage    = 2
)

const usage = `usage:
  lockgen [-o FILE] [-check] [packages]     generate lock wrappers
  lockgen locks ls|show|release ...         inspect and clear locks in Redis (lockgen locks -h)

Generates Redis-lock wrappers for methods annotated with //lock: comments,
usually from go generate (//go:generate go tool lockgen). Packages default
to ".". Flags of the generator:
`

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("lockgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		io.WriteString(stderr, usage)
		fs.PrintDefaults()
	}
	output := fs.String("o", generator.DefaultOutput, "output file `name`, written into each package's directory")
	check := fs.Bool("check", false, "write nothing; exit 1 if an output file is missing or differs from what would be generated")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if err := generator.ValidOutputName(*output); err != nil {
		io.WriteString(stderr, "lockgen: -o: "+err.Error()+"\n")
		return exitUsage
	}
	cwd, err := os.Getwd()
	if err != nil {
		io.WriteString(stderr, "lockgen: "+err.Error()+"\n")
		return exitProblems
	}
	files, diags, err := generator.Generate(generator.Config{Dir: cwd, Patterns: fs.Args(), Output: *output})
	if err != nil {
		io.WriteString(stderr, "lockgen: "+err.Error()+"\n")
		return exitProblems
	}
	if len(diags) > 0 {
		for _, d := range diags {
			d.Pos.Filename = relative(cwd, d.Pos.Filename)
			io.WriteString(stderr, d.String()+"\n")
		}
		return exitProblems
	}
	if *check {
		code := exitOK
		for _, f := range files {
			problem, err := generator.Stale(f)
			if err != nil {
				io.WriteString(stderr, "lockgen: "+err.Error()+"\n")
				return exitProblems
			}
			if problem != "" {
				io.WriteString(stderr, relative(cwd, f.Path)+": "+problem+"; run lockgen\n")
				code = exitProblems
			}
		}
		return code
	}
	for _, f := range files {
		if err := commit(f); err != nil {
			io.WriteString(stderr, "lockgen: "+err.Error()+"\n")
			return exitProblems
		}
	}
	return exitOK
}

// relative shortens a path for printing: relative to the current directory
// when the file is under it ("svc.go" from go generate,
// "internal/svc/svc.go" from the module root), else relative to the root
// of the module that holds the file, which is where editors and CI logs
// open paths from; absolute if neither applies.
func relative(cwd, path string) string {
	if !filepath.IsAbs(path) {
		return path
	}
	if rel, ok := under(cwd, path); ok {
		return rel
	}
	if root := moduleRoot(filepath.Dir(path)); root != "" {
		if rel, ok := under(root, path); ok {
			return rel
		}
	}
	return path
}

// under returns path relative to dir if path lies below dir.
func under(dir, path string) (string, bool) {
	rel, err := filepath.Rel(dir, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return rel, true
}

// moduleRoot returns the nearest directory at or above dir that holds a
// go.mod file, or "".
func moduleRoot(dir string) string {
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}
