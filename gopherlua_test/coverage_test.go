package gopherlua_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/lockgen/lockgen/lua"
)

// TestCoverage plays every scenario in the shim (alone, no server needed),
// reports the line coverage of each script file, and fails if any executable
// line of any file never ran. A line of the shared prelude counts as run if
// any script ran it.
func TestCoverage(t *testing.T) {
	// file -> line -> ran
	lines := map[string]map[int]bool{}
	for _, sc := range allScenarios() {
		shim := newShimTarget(t, []string{sc.wakeChannel()})
		ok := t.Run(sc.name, func(t *testing.T) { play(t, sc, shim, 0) })
		shim.close()
		if !ok {
			continue
		}
		for _, cov := range shim.cov.Coverage() {
			s, found := lua.ByName(cov.Name)
			if !found {
				t.Fatalf("coverage for unknown script %q", cov.Name)
			}
			hit := map[int]bool{}
			for _, l := range cov.Hit {
				hit[l] = true
			}
			for _, l := range cov.Executable {
				file, fl := s.File(l)
				if lines[file] == nil {
					lines[file] = map[int]bool{}
				}
				lines[file][fl] = lines[file][fl] || hit[l]
			}
		}
	}
	files := make([]string, 0, len(lines))
	for f := range lines {
		files = append(files, f)
	}
	sort.Strings(files)
	if len(files) != len(lua.All())+1 {
		t.Errorf("coverage covers %d files, want %d scripts and the prelude", len(files), len(lua.All()))
	}
	var report strings.Builder
	fmt.Fprintf(&report, "line coverage of the Lua scripts in the shim:\n")
	for _, f := range files {
		var missed []int
		for l, ran := range lines[f] {
			if !ran {
				missed = append(missed, l)
			}
		}
		sort.Ints(missed)
		n := len(lines[f])
		fmt.Fprintf(&report, "  %-24s %3d/%3d lines", f, n-len(missed), n)
		if len(missed) > 0 {
			fmt.Fprintf(&report, "  missed: %v", missed)
			t.Errorf("%s: lines never run offline: %v", f, missed)
		}
		report.WriteString("\n")
	}
	t.Log(report.String())
}

// TestFamiliesCoverEveryScript: the scenarios that run every script of a
// family (malformedScenarios) find the scripts by name prefix, so each
// script of package lua must belong to exactly one family.
func TestFamiliesCoverEveryScript(t *testing.T) {
	seen := map[string]string{}
	for _, f := range families {
		for _, s := range f.scripts() {
			if other, ok := seen[s.Name]; ok {
				t.Errorf("%s belongs to families %s and %s", s.Name, other, f.name)
			}
			seen[s.Name] = f.name
		}
	}
	for _, s := range lua.All() {
		if _, ok := seen[s.Name]; !ok {
			t.Errorf("%s belongs to no family", s.Name)
		}
	}
}
