package generator

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// writeBenchSource writes src as svc.go of a package in a temporary
// directory inside the module (removed when b ends) and returns its
// pattern and directory.
func writeBenchSource(b *testing.B, src string) (pattern, dir string) {
	b.Helper()
	dir, err := os.MkdirTemp(".", "_bench")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.WriteFile(filepath.Join(dir, "svc.go"), []byte(src), 0o644); err != nil {
		b.Fatal(err)
	}
	return "./" + filepath.Base(dir), dir
}

// writeBenchPackage writes a package with n annotated methods (see
// writeBenchSource).
func writeBenchPackage(b *testing.B, n int) (pattern, dir string) {
	b.Helper()
	var src strings.Builder
	src.WriteString("package bench\n\nimport \"context\"\n\ntype Req struct{ Tenant string; ID int64 }\n\ntype Svc struct{}\n")
	kinds := []string{"mutex", "fair", "read", "write", "semaphore permits=4"}
	for i := range n {
		k := kinds[i%len(kinds)]
		// A key of its own per method: kinds in rotation on one key would
		// be refused (each kind keeps its own Redis keys).
		src.WriteString("\n//lock:" + k + " key=m" + strconv.Itoa(i) + ":t:<r.Tenant>:o:<r.ID> lease=10s\nfunc (s *Svc) M" + strconv.Itoa(i) + "(ctx context.Context, r *Req) (int, error) { return 0, nil }\n")
	}
	return writeBenchSource(b, src.String())
}

// BenchmarkGenerate200 is lockgen's wall time on a package of 200 annotated
// methods: load (go list + type-check against export data), analysis and
// rendering. BenchmarkVet200 is go vet of the same package with the output in
// place, the floor any type-checking tool pays.
func BenchmarkGenerate200(b *testing.B) {
	pattern, _ := writeBenchPackage(b, 200)
	b.ResetTimer()
	for b.Loop() {
		files, diags, err := Generate(Config{Patterns: []string{pattern}})
		if err != nil || len(diags) > 0 || len(files) != 1 {
			b.Fatalf("err %v, diags %v, %d files", err, diags, len(files))
		}
	}
}

// BenchmarkRegenerate200 is BenchmarkGenerate200 with the output already in
// place, as on every run after the first: lockgen must load the package
// without it.
func BenchmarkRegenerate200(b *testing.B) {
	pattern, dir := writeBenchPackage(b, 200)
	writeOutput(b, pattern, dir)
	b.ResetTimer()
	for b.Loop() {
		files, diags, err := Generate(Config{Patterns: []string{pattern}})
		if err != nil || len(diags) > 0 || len(files) != 1 {
			b.Fatalf("err %v, diags %v, %d files", err, diags, len(files))
		}
	}
}

// writeOutput generates the package and writes its output in place.
func writeOutput(b *testing.B, pattern, dir string) {
	b.Helper()
	files, diags, err := Generate(Config{Patterns: []string{pattern}})
	if err != nil || len(diags) > 0 || len(files) != 1 {
		b.Fatalf("err %v, diags %v", err, diags)
	}
	if err := os.WriteFile(filepath.Join(dir, DefaultOutput), files[0].Content, 0o644); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkVet200(b *testing.B) {
	pattern, dir := writeBenchPackage(b, 200)
	writeOutput(b, pattern, dir)
	b.ResetTimer()
	for b.Loop() {
		out, err := exec.Command("go", "vet", pattern).CombinedOutput()
		if err != nil {
			b.Fatalf("go vet: %v\n%s", err, out)
		}
	}
}
