package runtime_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The runtime must not link gopher-lua: it is the embedded backend's
// dependency only.
func TestRuntimeDoesNotImportGopherLua(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/lockgen/lockgen/runtime").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list printed %d packages; expected the runtime's dependency list", len(deps))
	}
	for _, d := range deps {
		if strings.HasPrefix(d, "github.com/yuin/gopher-lua") || d == "github.com/lockgen/lockgen/luashim" {
			t.Fatalf("runtime depends on %s", d)
		}
	}
}
