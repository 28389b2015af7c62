package templates

import (
	"fmt"
	"testing"
	"time"

	"github.com/dave/jennifer/jen"
	"github.com/lockgen/lockgen/internal/family"
)

func TestDurationCode(t *testing.T) {
	for d, want := range map[time.Duration]string{
		time.Second:             "time.Second",
		90 * time.Second:        "90 * time.Second",
		2 * time.Hour:           "2 * time.Hour",
		1500 * time.Millisecond: "1500 * time.Millisecond",
		7:                       "7 * time.Nanosecond",
	} {
		if got := fmt.Sprintf("%#v", jen.Add(durationCode(d))); got != want {
			t.Errorf("%v: got %q, want %q", d, got, want)
		}
	}
}

func TestNamesAvoidReservedAndBuiltins(t *testing.T) {
	n := NewNames("runtime", "err")
	for _, c := range [][2]string{{"runtime", "runtime1"}, {"err", "err1"}, {"len", "len1"}, {"id", "id"}, {"", "v"}, {"_", "v1"}} {
		if got := n.Fresh(c[0]); got != c[1] {
			t.Errorf("Fresh(%q) = %q, want %q", c[0], got, c[1])
		}
	}
	if got := n.Fresh("runtime"); got != "runtime2" {
		t.Errorf("second Fresh(runtime) = %q", got)
	}
}

// The emitters and the family table (internal/family) list the same kinds.
func TestEveryKindHasEmitter(t *testing.T) {
	for _, k := range family.All {
		if e, ok := kinds[k.Name]; !ok || e.runtimeConst != k.Const {
			t.Errorf("kind %s: emitter %+v, want one naming runtime.%s", k.Name, e, k.Const)
		}
	}
	if len(kinds) != len(family.All) {
		t.Errorf("%d emitters for %d kinds of the family table", len(kinds), len(family.All))
	}
}
