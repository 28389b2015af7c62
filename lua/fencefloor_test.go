package lua

import (
	"fmt"
	"strings"
	"testing"
)

// The Go constant and the prelude's must agree: tests and the runtime's
// documentation read the floor from FenceFloor, the scripts from
// LG_FLOOR_MS and LG_FLOOR_PX (the same, as a string).
func TestFenceFloorMatchesThePrelude(t *testing.T) {
	ms := FenceFloor.Milliseconds()
	for _, want := range []string{
		fmt.Sprintf("local LG_FLOOR_MS = %d\n", ms),
		fmt.Sprintf("local LG_FLOOR_PX = '%d'\n", ms),
	} {
		if !strings.Contains(Prelude(), want) {
			t.Errorf("prelude.lua does not define %q", strings.TrimSpace(want))
		}
	}
}
