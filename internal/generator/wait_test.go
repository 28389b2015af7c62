package generator

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// The annotation's wait=0 tries once, runtime.Lock's Wait 0 waits until ctx
// is done (docs/generator.md). So every spelling of a zero wait= must come
// out as runtime.NoWait, a missing wait= as no Wait field, and a positive
// one as that duration: a literal Wait of 0 in generated code would turn a
// try-once into an unbounded wait.
func TestWaitZeroBecomesNoWait(t *testing.T) {
	dir, err := os.MkdirTemp(".", "_wait")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	src := `package a

import "context"

type T struct{}

//lock:mutex key=a wait=0
func (T) A(ctx context.Context) error { return nil }

//lock:mutex key=b wait=0s
func (T) B(ctx context.Context) error { return nil }

//lock:mutex key=c wait=0ms
func (T) C(ctx context.Context) error { return nil }

//lock:mutex key=d
func (T) D(ctx context.Context) error { return nil }

//lock:mutex key=e wait=2s
func (T) E(ctx context.Context) error { return nil }
`
	if err := os.WriteFile(filepath.Join(dir, "a.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	files, diags, err := Generate(Config{Patterns: []string{"./" + filepath.Base(dir)}})
	if err != nil || len(diags) > 0 || len(files) != 1 {
		t.Fatalf("files %v, diags %v, err %v", files, diags, err)
	}
	out := string(files[0].Content)
	// The Wait field of each method's Lock literal, "" when there is none.
	waitOf := func(method string) string {
		re := regexp.MustCompile(`(?s)func \(w \*TLocked\) ` + method + `\(.*?Method:\s+"T\.` + method + `"`)
		body := re.FindString(out)
		if body == "" {
			t.Fatalf("no wrapper for %s in:\n%s", method, out)
		}
		m := regexp.MustCompile(`Wait:\s+([^,\n]+),`).FindStringSubmatch(body)
		if m == nil {
			return ""
		}
		return m[1]
	}
	for method, want := range map[string]string{
		"A": "runtime.NoWait", "B": "runtime.NoWait", "C": "runtime.NoWait",
		"D": "", "E": "2 * time.Second",
	} {
		if got := waitOf(method); got != want {
			t.Errorf("%s: Wait %q in the generated Lock, want %q", method, got, want)
		}
	}
}
