package lua_test

import (
	"crypto/sha1"
	"encoding/hex"
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
		if !strings.HasPrefix(s.Source, lua.Prelude()) {
			t.Errorf("%s: Source does not open with the prelude", s.Name)
		}
	}
	if _, ok := lua.ByName("spin_acquire"); ok {
		t.Error("ByName found a script that does not exist")
	}
}

// Every operation file opens with a comment giving KEYS, ARGV and the reply.
func TestEveryScriptDocumentsItsProtocol(t *testing.T) {
	for _, s := range lua.All() {
		body := strings.TrimPrefix(s.Source, lua.Prelude())
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

func TestFileMapsSourceLinesBack(t *testing.T) {
	s := lua.MutexAcquire
	prelude := strings.Count(lua.Prelude(), "\n")
	if f, l := s.File(1); f != lua.PreludeFile || l != 1 {
		t.Errorf("File(1) = %s:%d, want %s:1", f, l, lua.PreludeFile)
	}
	if f, l := s.File(prelude + 1); f != "mutex_acquire.lua" || l != 1 {
		t.Errorf("File(%d) = %s:%d, want mutex_acquire.lua:1", prelude+1, f, l)
	}
	lines := strings.Split(s.Source, "\n")
	if f, l := s.File(prelude + 1); f == "mutex_acquire.lua" && !strings.HasPrefix(lines[prelude+l-1], "-- mutex_acquire:") {
		t.Errorf("line %d of Source is %q, not the file's first line", prelude+1, lines[prelude])
	}
}
