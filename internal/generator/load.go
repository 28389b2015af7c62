package generator

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/tools/go/packages"

	"github.com/lockgen/lockgen/templates"
)

// excludedOutput replaces, through an overlay, an earlier output written
// without templates.Constraint (by a lockgen before it had one): the build
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

// load loads the packages type-checked, with lockgen's earlier output left
// out: the build tag excludes every output that starts with
// templates.Prologue (the header, then templates.Constraint), so the type-check uses the export data the go
// command has cached. Output of an earlier lockgen, without that line, is
// hidden by a second load with an overlay, once: the next run finds the
// line. previous holds the output paths that hold lockgen output now.
func load(cfg Config) (pkgs []*packages.Package, previous map[string]bool, err error) {
	patterns := cfg.Patterns
	if len(patterns) == 0 {
		patterns = []string{"."}
	}
	flags, err := buildFlags(cfg)
	if err != nil {
		return nil, nil, err
	}
	pc := &packages.Config{
		Mode:       packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo,
		Dir:        cfg.Dir,
		Env:        cfg.Env,
		BuildFlags: flags,
	}
	if pkgs, err = packages.Load(pc, patterns...); err != nil {
		return nil, nil, err
	}
	previous = make(map[string]bool)
	overlay := make(map[string][]byte)
	for _, p := range pkgs {
		dir := packageDir(p)
		if dir == "" {
			continue
		}
		out := filepath.Join(dir, cfg.Output)
		content, err := os.ReadFile(out)
		if err != nil || !isGenerated(content) {
			continue
		}
		previous[out] = true
		if !bytes.HasPrefix(content, []byte(templates.Prologue)) {
			overlay[out] = excludedOutput
		}
	}
	if len(overlay) > 0 {
		pc.Overlay = overlay
		if pkgs, err = packages.Load(pc, patterns...); err != nil {
			return nil, nil, err
		}
	}
	return pkgs, previous, nil
}

// buildFlags sets the build tags of the load: templates.BuildTag, plus the
// tags the user builds with. Those come from GOFLAGS (the environment or
// go env -w), which a -tags flag of lockgen's would otherwise override.
func buildFlags(cfg Config) ([]string, error) {
	cmd := exec.Command("go", "env", "GOFLAGS")
	cmd.Dir, cmd.Env = cfg.Dir, cfg.Env
	out, err := cmd.Output()
	if err != nil {
		return nil, errors.New("lockgen: go env GOFLAGS: " + err.Error())
	}
	var userTags []string
	for _, f := range strings.Fields(string(out)) {
		if name, value, ok := strings.Cut(strings.TrimLeft(f, "-"), "="); ok && name == "tags" {
			userTags = strings.Split(value, ",") // the last -tags wins, as in the go command
		}
	}
	tags := []string{templates.BuildTag}
	for _, t := range userTags {
		if t != "" && t != templates.BuildTag {
			tags = append(tags, t)
		}
	}
	return []string{"-tags=" + strings.Join(tags, ",")}, nil
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
