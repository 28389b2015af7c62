package backend

import (
	"testing"

	"github.com/lockgen/lockgen/lua"
)

func TestBoxedOnlyWhileTheyAreTheCallsValues(t *testing.T) {
	s := lua.All()[0]
	keys, args := []string{"k1", "k2"}, []string{"a", "b"}
	vals := []any{keys[0], keys[1], args[0], args[1]}
	c := Call{Script: s, Keys: keys, Args: args}
	if _, ok := c.Boxed(); ok {
		t.Fatal("a Call without boxed values reports some")
	}
	c = c.WithBoxed(vals)
	got, ok := c.Boxed()
	if !ok || len(got) != 4 || &got[0] != &vals[0] {
		t.Fatalf("Boxed = %v, %v; want the values given, not a copy", got, ok)
	}
	replaced := c
	replaced.Args = []string{"a", "other"}
	if _, ok := replaced.Boxed(); ok {
		t.Error("a Call whose ARGV a wrapper replaced still reports the old boxed values")
	}
	longer := c
	longer.Args = append(args[:2:2], "c")
	if _, ok := longer.Boxed(); ok {
		t.Error("a Call with one more ARGV reports boxed values of the wrong length")
	}
	if dropped := c.WithBoxed(nil); func() bool { _, ok := dropped.Boxed(); return ok }() {
		t.Error("WithBoxed(nil) leaves boxed values")
	}
	if n := testing.AllocsPerRun(100, func() {
		d := c.WithBoxed(vals)
		if _, ok := d.Boxed(); !ok {
			t.Fatal("lost")
		}
	}); n != 0 {
		t.Errorf("WithBoxed and Boxed allocate %v times", n)
	}
}
