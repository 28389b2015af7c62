package family

import (
	"slices"
	"strings"
	"testing"
)

// The table is consistent with itself: names unique, kinds of one family
// agree on its keys and have one kind that stands for the whole lock, the
// wake channel comes last, and every spelling can go into a key.
func TestTableIsConsistent(t *testing.T) {
	for _, msg := range tableProblems(All) {
		t.Error(msg)
	}
}

// tableProblems lists what is wrong with a table, so that the test above
// can also be shown to catch a broken row (TestBrokenRowsAreCaught).
func tableProblems(all []Kind) []string {
	var out []string
	seenName, seenConst := map[string]bool{}, map[string]bool{}
	whole := map[string]int{}
	suffixes := map[string][]string{}
	for _, k := range all {
		if k.Name == "" || k.Const == "" || k.Family == "" || seenName[k.Name] || seenConst[k.Const] {
			out = append(out, "kind "+k.Name+": a name or constant empty or used twice")
		}
		seenName[k.Name], seenConst[k.Const] = true, true
		if strings.ContainsAny(k.Family, ":{}") {
			out = append(out, "kind "+k.Name+": family "+k.Family+" would change the key's shape")
		}
		if len(k.Suffixes) == 0 || k.Suffixes[len(k.Suffixes)-1] != ":wake" {
			out = append(out, "kind "+k.Name+": the last suffix must be the wake channel \":wake\"")
		}
		for _, s := range k.Suffixes {
			if !strings.HasPrefix(s, ":") || strings.ContainsAny(s, "{}") {
				out = append(out, "kind "+k.Name+": suffix "+s+" must start with ':' and leave the hash tag alone")
			}
		}
		if prev, ok := suffixes[k.Family]; ok && !slices.Equal(prev, k.Suffixes) {
			out = append(out, "family "+k.Family+": its kinds disagree on the keys")
		}
		suffixes[k.Family] = k.Suffixes
		if k.Whole {
			whole[k.Family]++
		}
	}
	for fam := range suffixes {
		if whole[fam] != 1 {
			out = append(out, "family "+fam+": want exactly one kind that stands for the whole lock")
		}
	}
	return out
}

func TestBrokenRowsAreCaught(t *testing.T) {
	breaks := map[string]func([]Kind){
		"read keys differ from write": func(a []Kind) { a[2].Suffixes = []string{":readers", ":queue", ":wake"} },
		"wake not last":               func(a []Kind) { a[0].Suffixes = []string{":wake", ":waiters"} },
		"two whole rw kinds":          func(a []Kind) { a[2].Whole = true },
		"name used twice":             func(a []Kind) { a[1].Name = "mutex" },
	}
	for name, brk := range breaks {
		a := slices.Clone(All)
		brk(a)
		if len(tableProblems(a)) == 0 {
			t.Errorf("%s: not caught", name)
		}
	}
}

func TestLookups(t *testing.T) {
	for _, tc := range []struct{ fam, want string }{{"mutex", "mutex"}, {"fair", "fair"}, {"rw", "write"}, {"sem", "semaphore"}} {
		if k, ok := OfFamily(tc.fam); !ok || k.Name != tc.want {
			t.Errorf("OfFamily(%q) = %q, %v; want %q", tc.fam, k.Name, ok, tc.want)
		}
	}
	for _, bad := range []string{"", "read", "semaphore", "latch"} {
		if k, ok := OfFamily(bad); ok {
			t.Errorf("OfFamily(%q) = %q; want none", bad, k.Name)
		}
	}
	for _, k := range All {
		if got, ok := Named(k.Name); !ok || got.Const != k.Const {
			t.Errorf("Named(%q) = %+v, %v", k.Name, got, ok)
		}
	}
	if _, ok := Named("rw"); ok {
		t.Error(`Named("rw"): a family is not a kind name`)
	}
	names := map[string]string{"mutex": "mutex", "fair": "fair", "read": "rw", "write": "rw", "semaphore": "semaphore"}
	for _, k := range All {
		if got := k.LockName(); got != names[k.Name] {
			t.Errorf("%s.LockName() = %q, want %q", k.Name, got, names[k.Name])
		}
	}
	if got := Fair.Keys(); !slices.Equal(got, []string{"", ":queue", ":alive", ":wake"}) || Fair.Wake() != ":wake" {
		t.Errorf("Fair.Keys() = %q, Wake %q", got, Fair.Wake())
	}
}

// Index is the position in All (runtime.Kind minus one), NameList the
// names in that order, as error messages list them.
func TestIndexAndNameList(t *testing.T) {
	for i, k := range All {
		if got, ok := Index(k.Name); !ok || got != i {
			t.Errorf("Index(%q) = %d, %v; want %d", k.Name, got, ok, i)
		}
	}
	for _, bad := range []string{"", "rw", "sem", "Mutex"} {
		if _, ok := Index(bad); ok {
			t.Errorf("Index(%q) found a kind", bad)
		}
	}
	if got, want := NameList(), "mutex, fair, read, write, semaphore"; got != want {
		t.Errorf("NameList() = %q, want %q", got, want)
	}
}

// RenderKeys puts the key in one hash tag after the prefix and family, and
// every other KEY is the base key plus its suffix, in script order; a store
// with room is used as it is.
func TestRenderKeys(t *testing.T) {
	want := []string{"p:fair:{order:1}", "p:fair:{order:1}:queue", "p:fair:{order:1}:alive", "p:fair:{order:1}:wake"}
	if got := Fair.RenderKeys("p:", "order:1", nil); !slices.Equal(got, want) {
		t.Errorf("RenderKeys = %q, want %q", got, want)
	}
	var store [4]string
	got := Fair.RenderKeys("p:", "order:1", store[:])
	if !slices.Equal(got, want) || &got[0] != &store[0] {
		t.Errorf("RenderKeys into a store with room = %q (in store: %v)", got, &got[0] == &store[0])
	}
	small := make([]string, 1)
	if got := Read.RenderKeys("", "k", small); !slices.Equal(got, []string{"rw:{k}", "rw:{k}:readers", "rw:{k}:wake"}) || small[0] != "" {
		t.Errorf("RenderKeys with a small store = %q, store %q", got, small)
	}
}
