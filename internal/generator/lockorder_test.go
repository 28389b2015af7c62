package generator

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeModuleFiles writes the files that files(importPrefix) returns
// (relative path -> source) into a fresh directory inside this module, so
// that they can import each other and the module's packages; the leading
// underscore keeps ./... away from it.
func writeModuleFiles(t *testing.T, files func(importPrefix string) map[string]string) (dir string) {
	t.Helper()
	rel, err := os.MkdirTemp(".", "_lockorder")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(rel) })
	if dir, err = filepath.Abs(rel); err != nil {
		t.Fatal(err)
	}
	for name, src := range files("github.com/lockgen/lockgen/internal/generator/" + filepath.Base(dir)) {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// crossPackage has a cycle split over two packages: a.Store.Restock holds
// stock:<sku> and calls a's annotated Notifier interface (invoice:<id>);
// b.Billing.Invoice holds invoice:<id> and calls a's wrapper (stock:<sku>).
func crossPackage(prefix string) map[string]string {
	return map[string]string{
		"a/a.go": `package a

import "context"

type Notifier interface {
	//lock:mutex key=invoice:<id>
	Notify(ctx context.Context, id string) error
}

type Store struct{ notifier Notifier }

//lock:mutex key=stock:<sku>
func (s *Store) Take(ctx context.Context, sku string) error { return nil }

//lock:mutex key=stock:<sku>
func (s *Store) Restock(ctx context.Context, sku string) error {
	return s.notifier.Notify(ctx, sku)
}
`,
		"b/b.go": `package b

import (
	"context"

	"` + prefix + `/a"
)

type Billing struct{ store *a.StoreLocked }

//lock:mutex key=invoice:<id>
func (b *Billing) Invoice(ctx context.Context, id string) error {
	return b.store.Take(ctx, id)
}
`,
	}
}

func TestLockOrderAcrossPackages(t *testing.T) {
	dir := writeModuleFiles(t, crossPackage)
	_, diags, err := Generate(Config{Dir: dir, Patterns: []string{"./a", "./b"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(diags) != 1 {
		t.Fatalf("got %d diagnostics, want 1 cycle: %v", len(diags), diags)
	}
	d := diags[0]
	if d.Pos.Filename != filepath.Join(dir, "a", "a.go") || d.Pos.Line != 17 {
		t.Errorf("cycle reported at %v, want a/a.go:17 (the first call in source order)", d.Pos)
	}
	for _, want := range []string{
		"Store.Restock takes stock:<sku> then calls Notifier.Notify (a.go:7), which takes invoice:<id>",
		"Billing.Invoice takes invoice:<id> then, at ../b/b.go:13:9, calls Store.Take (a.go:13), which takes stock:<sku>",
	} {
		if !strings.Contains(d.Msg, want) {
			t.Errorf("message lacks %q:\n%s", want, d.Msg)
		}
	}
}

// With only b loaded, a's annotations are outside the run: no cycle, and
// generation goes ahead.
func TestLockOrderStaysWithinLoadedPackages(t *testing.T) {
	dir := writeModuleFiles(t, crossPackage)
	files, diags, err := Generate(Config{Dir: dir, Patterns: []string{"./b"}})
	if err != nil || len(diags) != 0 || len(files) != 1 {
		t.Fatalf("err %v, diags %v, %d files; want one file and no diagnostics", err, diags, len(files))
	}
}

// TestLockOrderFollows covers the ways a call path can reach a lock: each
// source has exactly one cycle (want names one of its paths) or none.
func TestLockOrderFollows(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{
			name: "recursive helpers terminate",
			src: `type S struct{ self *SLocked }

//lock:mutex key=a:<id>
func (s *S) A(ctx context.Context, id string) error { return ping(ctx, s, id, 3) }

func ping(ctx context.Context, s *S, id string, n int) error {
	if n == 0 {
		return s.self.B(ctx, id)
	}
	return pong(ctx, s, id, n-1)
}

func pong(ctx context.Context, s *S, id string, n int) error { return ping(ctx, s, id, n) }

//lock:mutex key=b:<id>
func (s *S) B(ctx context.Context, id string) error { return nil }

//lock:mutex key=b:<id>
func (s *S) C(ctx context.Context, id string) error { return s.self.D(ctx, id) }

//lock:mutex key=a:<id>
func (s *S) D(ctx context.Context, id string) error { return s.self.D(ctx, id) }
`,
			want: "S.A takes a:<id> then calls ping (p.go:10), which calls S.B (p.go:20), which takes b:<id>",
		},
		{
			name: "generic wrapper",
			src: `type C[K comparable] struct{ self *CLocked[K] }

//lock:mutex key=x:<id>
func (c *C[K]) X(ctx context.Context, id string) error { return c.self.Y(ctx, id) }

//lock:mutex key=y:<id>
func (c *C[K]) Y(ctx context.Context, id string) error { return nil }

//lock:mutex key=y:<id>
func (c *C[K]) Z(ctx context.Context, id string) error { return c.self.X(ctx, id) }
`,
			want: "C.X takes x:<id> then calls C.Y (p.go:11), which takes y:<id>",
		},
		{
			name: "a wrapper's delegating method runs the wrapped body",
			src: `type S struct{ self *SLocked }

//lock:mutex key=a:<id>
func (s *S) A(ctx context.Context, id string) error { return s.self.Plain(ctx, id) }

func (s *S) Plain(ctx context.Context, id string) error { return s.self.B(ctx, id) }

//lock:mutex key=b:<id>
func (s *S) B(ctx context.Context, id string) error { return s.self.A(ctx, id) }
`,
			want: "S.A takes a:<id> then calls S.Plain (p.go:10), which calls S.B (p.go:13), which takes b:<id>",
		},
		{
			name: "a promoted annotated method locks in the embedding type's wrapper",
			src: `type Base struct{}

//lock:mutex key=b:<id>
func (Base) Do(ctx context.Context, id string) error { return nil }

type S struct {
	Base
	self *SLocked
}

//lock:mutex key=a:<id>
func (s *S) A(ctx context.Context, id string) error { return s.self.Do(ctx, id) }

//lock:mutex key=b:<id>
func (s *S) B(ctx context.Context, id string) error { return s.self.A(ctx, id) }
`,
			want: "S.A takes a:<id> then calls Base.Do (p.go:8), which takes b:<id>",
		},
		{
			name: "a promoted delegating method runs the embedded body",
			src: `type Base struct{ s *SLocked }

func (b *Base) Plain(ctx context.Context, id string) error { return b.s.B(ctx, id) }

type S struct {
	*Base
	self *SLocked
}

//lock:mutex key=a:<id>
func (s *S) A(ctx context.Context, id string) error { return s.self.Plain(ctx, id) }

//lock:mutex key=b:<id>
func (s *S) B(ctx context.Context, id string) error { return s.self.A(ctx, id) }
`,
			want: "S.A takes a:<id> then calls Base.Plain (p.go:7), which calls S.B (p.go:18), which takes b:<id>",
		},
		{
			name: "closures and goroutines are not followed",
			src: `type S struct{ self *SLocked }

//lock:mutex key=a:<id>
func (s *S) A(ctx context.Context, id string) error {
	go s.self.B(ctx, id)
	f := func() error { return s.self.B(ctx, id) }
	_ = f
	return nil
}

//lock:mutex key=b:<id>
func (s *S) B(ctx context.Context, id string) error { return s.self.A(ctx, id) }
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeModuleFiles(t, func(string) map[string]string {
				return map[string]string{"p/p.go": "package p\n\nimport \"context\"\n\n" + tt.src}
			})
			_, diags, err := Generate(Config{Dir: dir, Patterns: []string{"./p"}})
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tt.want == "" && len(diags) != 0:
				t.Errorf("want no diagnostics, got %v", diags)
			case tt.want != "" && (len(diags) != 1 || !strings.Contains(diags[0].Msg, tt.want)):
				t.Errorf("want one cycle with %q, got %v", tt.want, diags)
			}
		})
	}
}

// A method promoted from a package outside the run still locks in the
// embedding type's wrapper; its annotation is read from source, as
// generation reads it.
func TestLockOrderPromotedFromUnloadedPackage(t *testing.T) {
	dir := writeModuleFiles(t, func(prefix string) map[string]string {
		return map[string]string{
			"a/a.go": `package a

import "context"

type Base struct{}

//lock:mutex key=b:<id>
func (Base) Do(ctx context.Context, id string) error { return nil }
`,
			"b/b.go": `package b

import (
	"context"

	"` + prefix + `/a"
)

type S struct {
	a.Base
	self *SLocked
}

//lock:mutex key=a:<id>
func (s *S) A(ctx context.Context, id string) error { return s.self.Do(ctx, id) }

//lock:mutex key=b:<id>
func (s *S) B(ctx context.Context, id string) error { return s.self.A(ctx, id) }
`,
		}
	})
	_, diags, err := Generate(Config{Dir: dir, Patterns: []string{"./b"}})
	if err != nil {
		t.Fatal(err)
	}
	want := "S.A takes a:<id> then calls Base.Do (../a/a.go:8), which takes b:<id>"
	if len(diags) != 1 || !strings.Contains(diags[0].Msg, want) {
		t.Errorf("want one cycle with %q, got %v", want, diags)
	}
}

// A stale, broken lock_gen.go is hidden from the load; the check sees the
// new output's wrappers instead.
func TestLockOrderIgnoresStaleOutput(t *testing.T) {
	dir := writeModuleFiles(t, func(string) map[string]string {
		return map[string]string{
			"p/lock_gen.go": "// Code generated by lockgen. DO NOT EDIT.\n\npackage p\n\nfunc (w *SLocked) A( {\n",
			"p/p.go": `package p

import "context"

type S struct{ self *SLocked }

//lock:mutex key=a:<id>
func (s *S) A(ctx context.Context, id string) error { return s.self.B(ctx, id) }

//lock:mutex key=b:<id>
func (s *S) B(ctx context.Context, id string) error { return s.self.A(ctx, id) }
`,
		}
	})
	_, diags, err := Generate(Config{Dir: dir, Patterns: []string{"./p"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(diags) != 1 || !strings.HasPrefix(diags[0].Msg, "lock order cycle: S.A takes a:<id> then calls S.B (p.go:11), which takes b:<id>; S.B takes b:<id>") {
		t.Errorf("want the A/B cycle, got %v", diags)
	}
}
