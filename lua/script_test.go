package lua_test

import (
	"crypto/sha1"
	"encoding/hex"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/lockgen/lockgen/lua"
)

func TestAllIsSortedAndFindable(t *testing.T) {
	all := lua.All()
	if len(all) == 0 {
		t.Fatal("no scripts")
	}
	if !sort.SliceIsSorted(all, func(i, j int) bool { return all[i].Name < all[j].Name }) {
		t.Error("All is not sorted by name")
	}
	for _, s := range all {
		got, ok := lua.ByName(s.Name)
		if !ok || got != s {
			t.Errorf("ByName(%q) = %v, %v", s.Name, got, ok)
		}
		sum := sha1.Sum([]byte(s.Source))
		if s.SHA1 != hex.EncodeToString(sum[:]) {
			t.Errorf("%s: SHA1 %s does not match its Source", s.Name, s.SHA1)
		}
		if strings.Contains(s.Body(), "local function lg_") {
			t.Errorf("%s: the operation's file defines a helper", s.Name)
		}
	}
	if _, ok := lua.ByName("spin_acquire"); ok {
		t.Error("ByName found a script that does not exist")
	}
}

// Every operation file opens with a comment giving KEYS, ARGV and the reply.
func TestEveryScriptDocumentsItsProtocol(t *testing.T) {
	for _, s := range lua.All() {
		body := s.Body()
		if !strings.HasPrefix(body, "-- "+s.Name+":") {
			t.Errorf("%s.lua does not open with a comment naming it", s.Name)
		}
		for _, word := range []string{"KEYS[1]", "ARGV[1]", "Reply:"} {
			if !strings.Contains(body, word) {
				t.Errorf("%s.lua: header comment lacks %q", s.Name, word)
			}
		}
	}
}

// Every line of every Source is traced back to the very line of the file
// it came from, so coverage and error line numbers point at the right place;
// the operation's file comes whole and in order, and the helpers ahead of
// it, or, in a file with lua.HelpersMark, its functions right below the
// mark.
func TestFileMapsSourceLinesBack(t *testing.T) {
	prelude := strings.Split(lua.Prelude(), "\n")
	for _, s := range lua.All() {
		body := strings.Split(strings.TrimSuffix(s.Body(), "\n"), "\n")
		src := strings.Split(strings.TrimSuffix(s.Source, "\n"), "\n")
		next := 1 // the body line expected next
		for i, text := range src {
			file, line := s.File(i + 1)
			var want []string
			switch file {
			case lua.PreludeFile:
				if next > 1 && body[next-2] != lua.HelpersMark {
					t.Fatalf("%s: line %d maps to the prelude after body line %d, which is not the mark", s.Name, i+1, next-1)
				}
				want = prelude
			case s.Name + ".lua":
				if line != next {
					t.Fatalf("%s: line %d maps to body line %d, want %d", s.Name, i+1, line, next)
				}
				next++
				want = body
			default:
				t.Fatalf("%s: line %d maps to %s", s.Name, i+1, file)
			}
			if line < 1 || line > len(want) || want[line-1] != text {
				t.Fatalf("%s: line %d %q maps to %s:%d", s.Name, i+1, text, file, line)
			}
		}
		if next != len(body)+1 {
			t.Errorf("%s: Source carries body lines 1..%d of %d", s.Name, next-1, len(body))
		}
		if f, l := s.File(len(src) + 1); l != 0 {
			t.Errorf("%s: a line past Source maps to %s:%d, want line 0", s.Name, f, l)
		}
	}
}

var (
	definition = regexp.MustCompile(`(?m)^local (?:function )?((?:lg|LG)_\w+)`)
	identifier = regexp.MustCompile(`\b(?:lg|LG)_\w+\b`)
)

// uses counts the mentions of each lg_/LG_ name in src outside comments,
// definitions included.
func uses(src string) map[string]int {
	n := map[string]int{}
	for _, l := range strings.Split(src, "\n") {
		if c := strings.Index(l, "--"); c >= 0 {
			l = l[:c]
		}
		for _, id := range identifier.FindAllString(l, -1) {
			n[id]++
		}
	}
	return n
}

// Each Source defines only helpers it uses (a definition is one mention;
// a used helper has at least two), and every helper of the prelude is used
// by some script.
func TestSourcesCarryOnlyTheHelpersTheyUse(t *testing.T) {
	usedSomewhere := map[string]bool{}
	for _, s := range lua.All() {
		mentions := uses(s.Source)
		var defined []string
		for _, m := range definition.FindAllStringSubmatch(s.Source, -1) {
			defined = append(defined, m[1])
			if mentions[m[1]] < 2 {
				t.Errorf("%s: defines %s but never uses it", s.Name, m[1])
			}
			usedSomewhere[m[1]] = true
		}
		if !reflect.DeepEqual(defined, s.Helpers()) {
			t.Errorf("%s: Source defines %v, Helpers says %v", s.Name, defined, s.Helpers())
		}
		for name := range uses(s.Body()) {
			if !slices.Contains(defined, name) {
				t.Errorf("%s: uses %s without defining it", s.Name, name)
			}
		}
	}
	all := definition.FindAllStringSubmatch(lua.Prelude(), -1)
	if len(all) < 20 {
		t.Fatalf("found only %d helpers in the prelude", len(all))
	}
	for _, m := range all {
		if !usedSomewhere[m[1]] {
			t.Errorf("%s: %s is used by no script", lua.PreludeFile, m[1])
		}
	}
}

// The lean Sources are the point: the uncontended mutex path must not carry
// the fair, shared or read/write helpers.
func TestMutexScriptsCarryNoOtherFamilysHelpers(t *testing.T) {
	for _, s := range []*lua.Script{lua.MutexAcquire, lua.MutexRenew, lua.MutexRelease} {
		for _, h := range s.Helpers() {
			if strings.Contains(h, "fair") || strings.Contains(h, "shared") || strings.Contains(h, "writer") || strings.Contains(h, "hold") {
				t.Errorf("%s carries %s", s.Name, h)
			}
		}
	}
}
