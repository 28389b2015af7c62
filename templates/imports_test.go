package templates

import (
	"go/format"
	"testing"
)

func TestGroupImports(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{
			name: "standard library first, then the rest, aliases kept",
			in:   "package p\n\nimport (\n\t\"context\"\n\truntime2 \"github.com/lockgen/lockgen/runtime\"\n\t\"example.com/a\"\n\t\"net/http\"\n)\n\nvar _ = 1\n",
			want: "package p\n\nimport (\n\t\"context\"\n\t\"net/http\"\n\n\t\"example.com/a\"\n\truntime2 \"github.com/lockgen/lockgen/runtime\"\n)\n\nvar _ = 1\n",
		},
		{
			name: "only the standard library",
			in:   "package p\n\nimport (\n\t\"errors\"\n\t\"context\"\n)\n",
			want: "package p\n\nimport (\n\t\"context\"\n\t\"errors\"\n)\n",
		},
		{
			name: "only other modules",
			in:   "package p\n\nimport (\n\t\"github.com/x/y\"\n\t\"example.com/z\"\n)\n",
			want: "package p\n\nimport (\n\t\"example.com/z\"\n\t\"github.com/x/y\"\n)\n",
		},
		{
			name: "a single import is left alone",
			in:   "package p\n\nimport \"github.com/x/y\"\n\nvar _ = y.Z\n",
			want: "package p\n\nimport \"github.com/x/y\"\n\nvar _ = y.Z\n",
		},
		{
			name: "no imports",
			in:   "package p\n",
			want: "package p\n",
		},
	}
	for _, tt := range tests {
		got, err := groupImports([]byte(tt.in))
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if string(got) != tt.want {
			t.Errorf("%s:\ngot\n%s\nwant\n%s", tt.name, got, tt.want)
		}
		if formatted, err := format.Source(got); err != nil || string(formatted) != string(got) {
			t.Errorf("%s: output is not gofmt-clean (err %v):\n%s", tt.name, err, formatted)
		}
	}
}

func TestGroupImportsRejectsBrokenSource(t *testing.T) {
	if _, err := groupImports([]byte("package p\n\nimport (\n\t\"a\"\n")); err == nil {
		t.Error("no error for an unterminated import block")
	}
}

func TestIsStandardLibrary(t *testing.T) {
	for path, want := range map[string]bool{
		"context": true, "net/http": true, "internal/x": true,
		"github.com/a/b": false, "example.com": false, "gopkg.in/yaml.v3": false,
	} {
		if got := isStandardLibrary(path); got != want {
			t.Errorf("isStandardLibrary(%q) = %v, want %v", path, got, want)
		}
	}
}
