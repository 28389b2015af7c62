package runtime

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/lockgen/lockgen/internal/family"
	"github.com/lockgen/lockgen/lua"
)

// The runtime's Kinds and the shared family table (internal/family) agree:
// every Kind has its row and every row its Kind, in the same order, and
// each constant is the one the row says generated code names.
func TestKindTable(t *testing.T) {
	for _, msg := range kindTableProblems(families[:]) {
		t.Error(msg)
	}
}

func kindTableProblems(table []kindFamily) []string {
	var out []string
	if len(table) != len(family.All)+1 {
		out = append(out, fmt.Sprintf("runtime has %d kinds, the family table %d", len(table)-1, len(family.All)))
	}
	consts := map[Kind]string{Mutex: "Mutex", Fair: "Fair", Read: "Read", Write: "Write", Semaphore: "Semaphore"}
	if len(consts) != int(Semaphore) {
		out = append(out, "a Kind constant is missing from this test")
	}
	for i, row := range family.All {
		k := Kind(i + 1)
		if int(k) >= len(table) {
			out = append(out, fmt.Sprintf("family %s has no runtime Kind", row.Name))
			continue
		}
		if !reflect.DeepEqual(table[k].Kind, row) {
			out = append(out, fmt.Sprintf("Kind(%d) is row %+v, the family table says %+v", k, table[k].Kind, row))
		}
		if consts[k] != row.Const {
			out = append(out, fmt.Sprintf("Kind(%d) is the constant %s, the family table says %s", k, consts[k], row.Const))
		}
	}
	return out
}

// keysDoc reads what a script's comments say of its KEYS: "KEYS[2]
// B:queue" documents KEYS[2] as the base key plus ":queue".
var keysDoc = regexp.MustCompile(`KEYS\[(\d+)\]\s+B(:[a-z]+)?\b`)

// documentedKeys returns the suffixes a script's comment lines give its
// KEYS, in order, the base key as "".
func documentedKeys(s *lua.Script) ([]string, error) {
	byIndex := map[int]string{}
	for _, line := range strings.Split(s.Body(), "\n") {
		comment, ok := strings.CutPrefix(strings.TrimSpace(line), "--")
		if !ok {
			continue
		}
		for _, m := range keysDoc.FindAllStringSubmatch(comment, -1) {
			n, _ := strconv.Atoi(m[1])
			if prev, seen := byIndex[n]; seen && prev != m[2] {
				return nil, fmt.Errorf("KEYS[%d] documented as B%s and B%s", n, prev, m[2])
			}
			byIndex[n] = m[2]
		}
	}
	keys := make([]string, len(byIndex))
	for n, suffix := range byIndex {
		if n < 1 || n > len(keys) {
			return nil, fmt.Errorf("KEYS documented with a gap: %v", byIndex)
		}
		keys[n-1] = suffix
	}
	return keys, nil
}

// kindScripts is every script the runtime runs with a kind's KEYS: its
// script set, and for a mutex the quorum Locker's renewal too.
func kindScripts(k Kind, f kindFamily) []*lua.Script {
	all := []*lua.Script{f.acquire, f.renew, f.release, f.heartbeat, f.inspect, f.force}
	if k == Mutex {
		all = append(all, lua.MutexFloor)
	}
	return slices.DeleteFunc(all, func(s *lua.Script) bool { return s == nil })
}

// Each script takes exactly the KEYS the family table lists for its kind,
// as its header documents them (lua/*.lua), and every lock script of
// package lua is some kind's (the latch has its own keys, package latch).
func TestScriptKeysMatchFamilyTable(t *testing.T) {
	for _, msg := range scriptKeyProblems(families[:]) {
		t.Error(msg)
	}
}

func scriptKeyProblems(table []kindFamily) []string {
	var out []string
	used := map[*lua.Script]bool{}
	for k := Mutex; int(k) < len(table); k++ {
		want := table[k].Keys()
		for _, s := range kindScripts(k, table[k]) {
			used[s] = true
			got, err := documentedKeys(s)
			if err != nil {
				out = append(out, fmt.Sprintf("%s: %v", s.Name, err))
			} else if !slices.Equal(got, want) {
				out = append(out, fmt.Sprintf("%s (kind %s): its header documents KEYS %q, the family table %q", s.Name, k, got, want))
			}
		}
	}
	for _, s := range lua.All() {
		if !used[s] && !strings.HasPrefix(s.Name, "latch_") {
			out = append(out, fmt.Sprintf("%s belongs to no kind of the runtime's table", s.Name))
		}
	}
	return out
}

// A row that disagrees is caught: the checks above are not vacuous.
func TestKindTableCatchesBrokenRows(t *testing.T) {
	breaks := map[string]func([]kindFamily) []string{
		"fair loses :alive": func(tb []kindFamily) []string {
			tb[Fair].Suffixes = []string{":queue", ":wake"}
			return scriptKeyProblems(tb)
		},
		"semaphore row swapped for read": func(tb []kindFamily) []string {
			tb[Semaphore].Kind = family.Read
			return kindTableProblems(tb)
		},
		"a kind without a row": func(tb []kindFamily) []string { return kindTableProblems(tb[:Semaphore]) },
		"write runs fair's release": func(tb []kindFamily) []string {
			tb[Write].release = lua.FairRelease
			return scriptKeyProblems(tb)
		},
	}
	for name, brk := range breaks {
		tb := slices.Clone(families[:])
		if len(brk(tb)) == 0 {
			t.Errorf("%s: not caught", name)
		}
	}
}

// The restart guard gives a refused grant back with its kind's release.
func TestRestartGuardReleasesMatchKinds(t *testing.T) {
	if len(releaseOf) != int(Semaphore) {
		t.Fatalf("releaseOf has %d acquire scripts, want one per kind (%d)", len(releaseOf), Semaphore)
	}
	for k := Mutex; k <= Semaphore; k++ {
		if got := releaseOf[k.scripts().acquire]; got != k.scripts().release {
			t.Errorf("%s: the guard would give a grant back with %v", k, got)
		}
	}
}

// Parsing a kind accepts its annotation name and its key family (the whole
// lock), and nothing else.
func TestParseKindFromFamilyTable(t *testing.T) {
	for k := Mutex; k <= Semaphore; k++ {
		if got, err := ParseKind(k.String()); err != nil || got != k {
			t.Errorf("ParseKind(%q) = %v, %v", k.String(), got, err)
		}
	}
	for name, want := range map[string]Kind{"rw": Write, "sem": Semaphore, "mutex": Mutex, "fair": Fair} {
		if got, err := ParseKind(name); err != nil || got != want {
			t.Errorf("ParseKind(%q) = %v, %v; want %v", name, got, err, want)
		}
	}
	for _, bad := range []string{"", "latch", "Mutex", "semaphores"} {
		if _, err := ParseKind(bad); err == nil {
			t.Errorf("ParseKind(%q) accepted", bad)
		}
	}
	_, err := ParseKind("x")
	if want := "want one of mutex, fair, read, write, semaphore"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("ParseKind(x): %v; want %q", err, want)
	}
}

// A Held keeps its first lock's KEYS in place (held.go): the array must
// have room for the kind with the most, or that kind's acquires allocate.
func TestHeldKeyStoreFitsEveryKind(t *testing.T) {
	var h Held
	for _, k := range family.All {
		if n := len(k.Keys()); n > len(h.firstKeys) {
			t.Errorf("kind %s has %d KEYS; Held.firstKeys holds %d", k.Name, n, len(h.firstKeys))
		}
	}
}
