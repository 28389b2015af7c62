package annotation

import (
	"testing"

	"github.com/lockgen/lockgen/internal/family"
)

// The parser's kinds are the family table's (internal/family), in its
// order: the generator, the runtime and `lockgen locks` spell them alike.
func TestKindsMatchFamilyTable(t *testing.T) {
	if len(Kinds) != len(family.All) {
		t.Fatalf("annotation.Kinds has %d kinds, the family table %d", len(Kinds), len(family.All))
	}
	for i, k := range family.All {
		if string(Kinds[i]) != k.Name {
			t.Errorf("annotation.Kinds[%d] = %q, the family table says %q", i, Kinds[i], k.Name)
		}
	}
}
