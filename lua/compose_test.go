package lua

import (
	"fmt"
	"strings"
	"testing"
)

// A file with the mark gets the constants it uses ahead of it and the
// functions right below the mark; a function used above the mark, or a
// second mark, is refused when the package loads.
func TestComposeHelpersMark(t *testing.T) {
	all, err := splitPrelude("local LG_K = 1\nlocal function lg_f()\n  return LG_K\nend\n")
	if err != nil {
		t.Fatal(err)
	}
	s, err := compose("op", "-- op: test\nif LG_K then return 1 end\n"+HelpersMark+"\nreturn lg_f()\n", all)
	if err != nil {
		t.Fatal(err)
	}
	want := "local LG_K = 1\n-- op: test\nif LG_K then return 1 end\n" + HelpersMark +
		"\nlocal function lg_f()\n  return LG_K\nend\nreturn lg_f()\n"
	if s.Source != want {
		t.Errorf("Source:\n%s\nwant:\n%s", s.Source, want)
	}
	if got := strings.Join(s.Helpers(), " "); got != "LG_K lg_f" {
		t.Errorf("Helpers: %s", got)
	}
	for line, want := range map[int]string{1: "prelude.lua:1", 2: "op.lua:1", 4: "op.lua:3", 5: "prelude.lua:2", 8: "op.lua:4"} {
		if f, l := s.File(line); fmt.Sprintf("%s:%d", f, l) != want {
			t.Errorf("File(%d) = %s:%d, want %s", line, f, l, want)
		}
	}

	// The mark on the file's last line: nothing follows it.
	s, err = compose("op", "-- op\nreturn LG_K\n"+HelpersMark+"\n", all)
	if err != nil || !strings.HasSuffix(s.Source, HelpersMark+"\n") || len(s.origin) != strings.Count(s.Source, "\n") {
		t.Errorf("mark last: %v, %d origins for %d lines:\n%s", err, len(s.origin), strings.Count(s.Source, "\n"), s.Source)
	}

	for body, wantErr := range map[string]string{
		"return lg_f()\n" + HelpersMark + "\nreturn 1\n":            "lg_f above",
		"return 1\n" + HelpersMark + "\n" + HelpersMark + "\nend\n": "more than once",
	} {
		if _, err := compose("op", "-- op\n"+body, all); err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("compose(%q): %v, want an error with %q", body, err, wantErr)
		}
	}
}

// The prelude's names say what a definition is, and a constant uses no
// function: compose relies on both to put constants ahead of a marked
// file and functions below its mark.
func TestSplitPreludeKeepsConstantsAndFunctionsApart(t *testing.T) {
	for src, wantErr := range map[string]string{
		"local function LG_F()\n  return 1\nend\n":                      "functions are named lg_*",
		"local lg_k = 1\n":                                              "functions are named lg_*",
		"local function lg_f()\n  return 1\nend\nlocal LG_K = lg_f()\n": "constant LG_K uses function lg_f",
	} {
		if _, err := splitPrelude(src); err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("splitPrelude(%q): %v, want an error with %q", src, err, wantErr)
		}
	}
}
