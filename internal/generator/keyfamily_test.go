package generator

import (
	"testing"

	"github.com/lockgen/lockgen/internal/annotation"
)

func template(t *testing.T, src string) annotation.Template {
	t.Helper()
	a, errs := annotation.Parse("//lock:mutex key=" + src)
	if len(errs) > 0 {
		t.Fatalf("%s: %v", src, errs)
	}
	return a.Keys[0]
}

func TestOverlap(t *testing.T) {
	tests := []struct {
		x, y string
		want bool
	}{
		{"order:<id>", "order:<id>", true},
		{"order:<id>", "order:<n>", true},
		{"order:<id>", "order:42", true},
		{"order:<id>", "order:", true}, // an empty value renders order:
		{"order:<id>", "order:<t>:<id>", false},
		{"order:<id>", "orders:<id>", false},
		{"a-<x>", "a-<y>-b", true}, // '-' may be part of a value
		{"a:<x>:b", "a:<y>", false},
		{"<x>:<y>", "a:b", true},
		{"<x>:<y>", "a:b:c", false},
		{"job", "job", true},
		{"job", "jobs", false},
		{"x%<v>", "x%41", true},
	}
	for _, tt := range tests {
		x, y := template(t, tt.x), template(t, tt.y)
		if got := overlap(x, y); got != tt.want {
			t.Errorf("overlap(%s, %s) = %v, want %v", tt.x, tt.y, got, tt.want)
		}
		if got := overlap(y, x); got != tt.want {
			t.Errorf("overlap(%s, %s) = %v, want %v (symmetry)", tt.y, tt.x, got, tt.want)
		}
	}
}
