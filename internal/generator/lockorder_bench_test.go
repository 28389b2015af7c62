package generator

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// writeCallingBenchPackage writes a package of n annotated methods where
// each one calls the next through the wrapper (s.self): the worst case for
// the lock-order check. The package refers to its wrapper, so the check
// type-checks it a second time, and the chain makes every method hold its
// lock against the locks of all methods after it (n*(n-1)/2 edges).
func writeCallingBenchPackage(b *testing.B, n int) (pattern, dir string) {
	b.Helper()
	var src strings.Builder
	src.WriteString("package bench\n\nimport (\n\t\"context\"\n\n\t\"github.com/lockgen/lockgen/runtime\"\n)\n\n")
	src.WriteString("type Req struct{ Tenant string; ID int64 }\n\ntype Svc struct{ self *SvcLocked }\n\n")
	src.WriteString("func New(l *runtime.Locker) *SvcLocked {\n\ts := &Svc{}\n\ts.self = NewSvcLocked(s, l)\n\treturn s.self\n}\n")
	kinds := []string{"mutex", "fair", "read", "write", "semaphore permits=4"}
	for i := range n {
		call := "return 0, nil"
		if i+1 < n {
			call = "return s.self.M" + strconv.Itoa(i+1) + "(ctx, r)"
		}
		src.WriteString("\n//lock:" + kinds[i%len(kinds)] + " key=m" + strconv.Itoa(i) + ":<r.Tenant>:<r.ID> lease=10s\n")
		src.WriteString("func (s *Svc) M" + strconv.Itoa(i) + "(ctx context.Context, r *Req) (int, error) { " + call + " }\n")
	}
	return writeBenchSource(b, src.String())
}

// BenchmarkGenerate200Calls is BenchmarkGenerate200 on the calling
// package: load, analysis, rendering, the second type-check and the
// lock-order check. BenchmarkVet200Calls is go vet of the same package.
func BenchmarkGenerate200Calls(b *testing.B) {
	pattern, _ := writeCallingBenchPackage(b, 200)
	b.ResetTimer()
	for b.Loop() {
		files, diags, err := Generate(Config{Patterns: []string{pattern}})
		if err != nil || len(diags) > 0 || len(files) != 1 {
			b.Fatalf("err %v, diags %v, %d files", err, diags, len(files))
		}
	}
}

func BenchmarkVet200Calls(b *testing.B) {
	pattern, dir := writeCallingBenchPackage(b, 200)
	files, diags, err := Generate(Config{Patterns: []string{pattern}})
	if err != nil || len(diags) > 0 || len(files) != 1 {
		b.Fatalf("err %v, diags %v", err, diags)
	}
	if err := os.WriteFile(filepath.Join(dir, DefaultOutput), files[0].Content, 0o644); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		out, err := exec.Command("go", "vet", pattern).CombinedOutput()
		if err != nil {
			b.Fatalf("go vet: %v\n%s", err, out)
		}
	}
}

// BenchmarkLockOrderCheck200Calls is the check alone (second type-check
// included), without loading or rendering.
func BenchmarkLockOrderCheck200Calls(b *testing.B) {
	pattern, _ := writeCallingBenchPackage(b, 200)
	cfg := Config{Patterns: []string{pattern}, Output: DefaultOutput}
	pkgs, _, err := load(cfg)
	if err != nil {
		b.Fatal(err)
	}
	files, _, err := Generate(cfg)
	if err != nil || len(files) != 1 {
		b.Fatalf("err %v, %d files", err, len(files))
	}
	b.ResetTimer()
	for b.Loop() {
		if diags := checkLockOrder(cfg, pkgs, files); len(diags) > 0 {
			b.Fatal(diags)
		}
	}
}
