package templates

import (
	"go/format"
	"go/types"
	"strings"
	"testing"
	"time"
)

// contextType is a stand-in for context.Context: a named interface in a
// package with path "context", which is all typeCode needs.
func contextType() types.Type {
	pkg := types.NewPackage("context", "context")
	tn := types.NewTypeName(0, pkg, "Context", nil)
	return types.NewNamed(tn, types.NewInterfaceType(nil, nil), nil)
}

// renderOrders renders a wrapper with one locked and one delegating method.
func renderOrders(t *testing.T) string {
	t.Helper()
	errType := types.Universe.Lookup("error").Type()
	str := types.Typ[types.String]
	f := &File{
		PkgPath: "example.com/shop",
		PkgName: "shop",
		Imports: []Import{{Path: runtimePath, Name: "runtime"}, {Path: "context", Name: "context"}, {Path: "time", Name: "time"}},
		Wrappers: []Wrapper{{
			TypeName: "Orders",
			Methods: []Method{
				{
					Name: "Pay", Recv: "w", Names: NewNames("w", "held", "err", "runtime"),
					Params:  []Var{{Name: "ctx", Type: contextType()}, {Name: "id", Type: str}},
					Results: []Var{{Name: "err", Type: errType}},
					Locked: &Locked{Locks: []Lock{{
						Kind: "fair", Template: "order:<id>", Lease: 90 * time.Second, HasWait: true, Wait: 0,
						Parts: []KeyPart{{Literal: "order:"}, {Value: &Value{Source: "id", Root: "id", Format: FormatString}}},
					}}, OnBusySkip: true},
				},
				{Name: "Count", Recv: "w", Results: []Var{{Type: types.Typ[types.Int]}}},
			},
		}},
	}
	src, err := Render(f)
	if err != nil {
		t.Fatal(err)
	}
	return string(src)
}

func TestRenderIsGofmtClean(t *testing.T) {
	src := renderOrders(t)
	formatted, err := format.Source([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if string(formatted) != src {
		t.Errorf("rendered source changes under gofmt:\n%s", src)
	}
}

func TestRenderGroupsImports(t *testing.T) {
	src := renderOrders(t)
	want := "import (\n\t\"context\"\n\t\"time\"\n\n\t\"github.com/lockgen/lockgen/runtime\"\n)\n"
	if !strings.Contains(src, want) {
		t.Errorf("import block not grouped; want\n%s\nin\n%s", want, src)
	}
}

func TestRenderNamesTheLockForObservers(t *testing.T) {
	src := renderOrders(t)
	for _, want := range []string{`Method:   "Orders.Pay",`, `Template: "order:<id>",`} {
		if !strings.Contains(src, want) {
			t.Errorf("runtime.Lock literal lacks %s:\n%s", want, src)
		}
	}
}

func TestRenderDocComments(t *testing.T) {
	src := renderOrders(t)
	for _, want := range []string{
		"// Pay takes the fair lock order:<id> (lease 1m30s, renewed, tries once), then\n// calls [Orders.Pay]. If the lock is busy, Pay returns zero values and a nil\n// error without calling it; a caller learns of the skip with\n// [runtime.TrackSkips].\nfunc (w *OrdersLocked) Pay(",
		"// Count delegates to [Orders.Count] without a lock.\nfunc (w *OrdersLocked) Count(",
		"//   - Pay: fair lock order:<id>\ntype OrdersLocked struct",
	} {
		if !strings.Contains(src, want) {
			t.Errorf("missing doc comment\n%s\nin\n%s", want, src)
		}
	}
}

func TestLockOptionsSpellEveryOption(t *testing.T) {
	tests := []struct {
		l    Lock
		want string
	}{
		{Lock{Kind: "mutex"}, "default lease, renewed, waits until ctx is done"},
		{Lock{Kind: "semaphore", Permits: 3, Lease: time.Hour, NoRenew: true, HasWait: true, Wait: 250 * time.Millisecond},
			"3 permits, lease 1h, not renewed, waits at most 250ms"},
		{Lock{Kind: "read", Lease: 2 * time.Minute, HasWait: true, Parts: []KeyPart{{Value: &Value{Source: "r.IDs", Slice: true}}}},
			"one key per element of r.IDs, all or nothing, lease 2m, renewed, tries once"},
	}
	for _, tt := range tests {
		if got := lockOptions(&tt.l); got != tt.want {
			t.Errorf("lockOptions(%+v) = %q, want %q", tt.l, got, tt.want)
		}
	}
}

func TestWrapWords(t *testing.T) {
	got := wrapWords("aaa bbb ccc dddddddddd e", 7)
	want := []string{"aaa bbb", "ccc", "dddddddddd", "e"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("wrapWords = %q, want %q", got, want)
	}
}
