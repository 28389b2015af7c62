package generator

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/tools/go/packages"

	"github.com/lockgen/lockgen/templates"
)

// excludedOutput replaces lockgen's earlier output during the load: the build
// constraint keeps it out of the package whatever its package clause says.
var excludedOutput = []byte("//go:build lockgen_previous_output\n\npackage ignored\n")

// isGenerated reports whether content starts with the lockgen header, after
// an optional //go:build line and blank lines.
func isGenerated(content []byte) bool {
	sc := bufio.NewScanner(bytes.NewReader(content))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "//go:build ") {
			continue
		}
		return line == templates.Header
	}
	return false
}

// load lists the packages, then loads them type-checked with any earlier
// lockgen output hidden.
func load(cfg Config) ([]*packages.Package, map[string]bool, error) {
	patterns := cfg.Patterns
	if len(patterns) == 0 {
		patterns = []string{"."}
	}
	listed, err := packages.Load(&packages.Config{
		Mode: packages.NeedName | packages.NeedFiles,
		Dir:  cfg.Dir,
		Env:  cfg.Env,
	}, patterns...)
	if err != nil {
		return nil, nil, err
	}
	overlay := make(map[string][]byte)
	previous := make(map[string]bool) // output paths that hold lockgen output now
	for _, p := range listed {
		dir := packageDir(p)
		if dir == "" {
			continue
		}
		out := filepath.Join(dir, cfg.Output)
		content, err := os.ReadFile(out)
		if err != nil || !isGenerated(content) {
			continue
		}
		overlay[out] = excludedOutput
		previous[out] = true
	}
	pkgs, err := packages.Load(&packages.Config{
		Mode:    packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo,
		Dir:     cfg.Dir,
		Env:     cfg.Env,
		Overlay: overlay,
	}, patterns...)
	if err != nil {
		return nil, nil, err
	}
	return pkgs, previous, nil
}

func packageDir(p *packages.Package) string {
	if p.Dir != "" {
		return p.Dir
	}
	for _, files := range [][]string{p.GoFiles, p.CompiledGoFiles, p.IgnoredFiles, p.OtherFiles} {
		if len(files) > 0 {
			return filepath.Dir(files[0])
		}
	}
	return ""
}

// packageErrorDiagnostic turns a go/packages error into a diagnostic; its
// position is "file:line:col" or "file:line" or empty.
// blockingErrors returns the errors of p that must stop generation.
//
// Without NeedDeps, go list compiles the package itself for export data and
// reports the compiler's errors as one positionless text block ("# pkg\n
// file:line:col: ..."); go/types reports the same errors, each with its
// position, as TypeErrors. Whenever go/types has reported something, the
// block is a duplicate and is dropped.
//
// Then the type errors that lockgen's own output will fix are dropped: with
// the earlier lock_gen.go hidden (or before the first run), code that uses
// the wrappers — NewOrderServiceLocked(...), a field of type
// *OrderServiceLocked — refers to names that do not exist yet; go/types
// reports them and still types everything else, so they must not stop the
// generation that defines them. Every name lockgen declares ends in "Locked".
func blockingErrors(p *packages.Package) []packages.Error {
	typeChecked := false
	for _, e := range p.Errors {
		typeChecked = typeChecked || e.Kind == packages.TypeError
	}
	var kept []packages.Error
	for _, e := range p.Errors {
		switch {
		case e.Kind == packages.ListError && typeChecked && strings.HasPrefix(e.Msg, "# "+p.PkgPath+"\n"):
			continue
		case e.Kind == packages.TypeError && undefinedGeneratedName.MatchString(e.Msg):
			continue
		}
		kept = append(kept, e)
	}
	return kept
}

var undefinedGeneratedName = regexp.MustCompile(`^undefined: (\w+\.)?\w*Locked$`)

func packageErrorDiagnostic(e packages.Error) Diagnostic {
	d := Diagnostic{Msg: e.Msg}
	pos := e.Pos
	if pos == "" || pos == "-" {
		return d
	}
	parts := strings.Split(pos, ":")
	nums := []int{}
	for len(parts) > 1 {
		n, err := strconv.Atoi(parts[len(parts)-1])
		if err != nil || len(nums) == 2 {
			break
		}
		nums = append([]int{n}, nums...)
		parts = parts[:len(parts)-1]
	}
	d.Pos.Filename = strings.Join(parts, ":")
	if len(nums) > 0 {
		d.Pos.Line = nums[0]
	}
	if len(nums) > 1 {
		d.Pos.Column = nums[1]
	}
	return d
}
