package golden

import (
	"flag"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockgen/lockgen/internal/generator"
)

var update = flag.Bool("update", false, "rewrite want/lock_gen.go and want/errors.txt")

const moduleRoot = ".."

// TestGolden generates every case, compares with its expectation, then builds
// and vets all successful cases together with their generated file in place.
func TestGolden(t *testing.T) {
	entries, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	var built []string
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), "_") {
			continue
		}
		name := e.Name()
		t.Run(name, func(t *testing.T) {
			if ok := runCase(t, name); ok {
				built = append(built, name)
			}
		})
	}
	if len(built) == 0 || t.Failed() {
		return
	}
	t.Run("build-and-vet", func(t *testing.T) { buildAndVet(t, built) })
}

// runCase reports whether the case generated code (rather than errors).
func runCase(t *testing.T, name string) bool {
	dir := filepath.Join("testdata", name)
	files, diags, err := generator.Generate(generator.Config{Dir: moduleRoot, Patterns: []string{"./golden/testdata/" + name}})
	if err != nil {
		t.Fatal(err)
	}
	wantCode := filepath.Join(dir, "want", "lock_gen.go")
	wantErrs := filepath.Join(dir, "want", "errors.txt")
	var got, wantPath, other string
	if len(diags) > 0 {
		var b strings.Builder
		for _, d := range diags {
			d.Pos.Filename = filepath.Base(d.Pos.Filename)
			b.WriteString(d.String() + "\n")
		}
		got, wantPath, other = b.String(), wantErrs, wantCode
	} else {
		if len(files) != 1 || files[0].Content == nil {
			t.Fatalf("got %d files, want 1 with content", len(files))
		}
		if want := filepath.Join(dir, generator.DefaultOutput); files[0].Path != mustAbs(t, want) {
			t.Errorf("output path %s, want %s", files[0].Path, want)
		}
		got, wantPath, other = string(files[0].Content), wantCode, wantErrs
		checkNoFmtOrReflect(t, files[0].Content)
	}
	if *update {
		if err := os.MkdirAll(filepath.Dir(wantPath), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(wantPath, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Remove(other)
	}
	want, err := os.ReadFile(wantPath)
	if err != nil {
		t.Fatalf("%v (run go test ./golden/... -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("mismatch (run go test ./golden/... -update to accept):\n%s", unifiedDiff(wantPath, "generated", string(want), got))
	}
	if _, err := os.Stat(other); err == nil {
		t.Errorf("%s exists but the case produced %s", other, filepath.Base(wantPath))
	}
	return len(diags) == 0
}

// buildAndVet copies each golden next to its input and runs one go vet over
// all of them (vet type-checks, so this is the build too).
func buildAndVet(t *testing.T, cases []string) {
	var pkgs []string
	for _, name := range cases {
		dir := filepath.Join("testdata", name)
		src, err := os.ReadFile(filepath.Join(dir, "want", "lock_gen.go"))
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, generator.DefaultOutput)
		if err := os.WriteFile(out, src, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove(out) })
		pkgs = append(pkgs, "./golden/testdata/"+name)
	}
	cmd := exec.Command("go", append([]string{"vet"}, pkgs...)...)
	cmd.Dir = moduleRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go vet of the goldens: %v\n%s", err, out)
	}
}

func mustAbs(t *testing.T, p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// checkNoFmtOrReflect holds the SPEC's promise that keys are rendered
// without fmt or reflection: the generated file imports neither.
func checkNoFmtOrReflect(t *testing.T, src []byte) {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "lock_gen.go", src, parser.ImportsOnly)
	if err != nil {
		t.Fatalf("generated code does not parse: %v", err)
	}
	for _, imp := range f.Imports {
		if p := imp.Path.Value; p == `"fmt"` || p == `"reflect"` {
			t.Errorf("generated code imports %s", p)
		}
	}
}
