package lua

import (
	"fmt"
	"regexp"
	"strings"
)

// Redis compiles a script once per SHA, but every call runs the chunk from
// the top, and each `local function` of it makes a new closure: a script
// that opened with the whole prelude paid for all its helpers on every call,
// a few µs of server CPU. So a Source carries only the helpers its operation
// references, directly or through another helper.

// helper is one top-level definition of prelude.lua (`local function lg_x`
// or `local LG_X = ...`) with the comment lines right above it.
type helper struct {
	name  string
	first int      // 1-based line of prelude.lua where the leading comment (or the definition) starts
	lines []string // the comment and the definition, as in the file
	uses  []string // other helpers its definition references
}

var (
	// A definition starts at column 0; the prelude's helpers are all named
	// lg_* (functions) or LG_* (constants).
	helperStart = regexp.MustCompile(`^local (?:function )?((?:lg|LG)_[A-Za-z0-9_]*)\b`)
	helperRef   = regexp.MustCompile(`\b(?:lg|LG)_[A-Za-z0-9_]*\b`)
)

// function reports whether h is a function (lg_*), made as a closure on
// every call of a script that carries it, rather than a constant (LG_*).
func (h helper) function() bool { return strings.HasPrefix(h.name, "lg_") }

// splitPrelude cuts src into its helpers, in file order. Lines that belong
// to no definition (the file's header, comments on a group of helpers,
// blank lines) are left out. A function ends at the first `end` in column
// 0; a constant at its last line, the lines after its first that are
// indented included.
func splitPrelude(src string) ([]helper, error) {
	lines := strings.Split(strings.TrimSuffix(src, "\n"), "\n")
	var out []helper
	known := map[string]bool{}
	for i := 0; i < len(lines); i++ {
		m := helperStart.FindStringSubmatch(lines[i])
		if m == nil {
			if strings.TrimSpace(lines[i]) != "" && !strings.HasPrefix(lines[i], "--") {
				return nil, fmt.Errorf("%s:%d: code outside a helper definition: %q", PreludeFile, i+1, lines[i])
			}
			continue
		}
		if known[m[1]] {
			return nil, fmt.Errorf("%s:%d: %s defined twice", PreludeFile, i+1, m[1])
		}
		start := i
		for start > 0 && strings.HasPrefix(lines[start-1], "--") {
			start--
		}
		end := i
		// The name says which a definition is (helper.function): a
		// script's mark relies on it to keep functions below it.
		if isFunc := strings.HasPrefix(lines[i], "local function "); isFunc != strings.HasPrefix(m[1], "lg_") {
			return nil, fmt.Errorf("%s:%d: %s: functions are named lg_*, constants LG_*", PreludeFile, i+1, m[1])
		}
		if strings.HasPrefix(lines[i], "local function ") {
			for end < len(lines) && strings.TrimRight(lines[end], " \t") != "end" {
				end++
			}
			if end == len(lines) {
				return nil, fmt.Errorf("%s:%d: function %s has no `end` in column 0", PreludeFile, i+1, m[1])
			}
		} else {
			for end+1 < len(lines) && strings.HasPrefix(lines[end+1], " ") {
				end++
			}
		}
		h := helper{name: m[1], first: start + 1, lines: lines[start : end+1]}
		for _, ref := range references(lines[i : end+1]) {
			if ref == h.name {
				continue // recursion
			}
			if !known[ref] {
				return nil, fmt.Errorf("%s:%d: %s uses %s, which is not defined above it", PreludeFile, i+1, h.name, ref)
			}
			// Constants go ahead of a marked file, functions below its
			// mark: a constant made of a function would be nil there.
			if !h.function() && strings.HasPrefix(ref, "lg_") {
				return nil, fmt.Errorf("%s:%d: constant %s uses function %s", PreludeFile, i+1, h.name, ref)
			}
			h.uses = append(h.uses, ref)
		}
		known[h.name] = true
		out = append(out, h)
		i = end
	}
	return out, nil
}

// references returns the lg_/LG_ names that code mentions outside comments,
// each once, in order of first mention.
func references(code []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, l := range code {
		if c := strings.Index(l, "--"); c >= 0 {
			l = l[:c]
		}
		for _, name := range helperRef.FindAllString(l, -1) {
			if !seen[name] {
				seen[name] = true
				out = append(out, name)
			}
		}
	}
	return out
}

// helpersFor returns, in prelude order, the helpers body needs: those it
// references and, transitively, those they reference. A name that looks like
// a helper but is none is an error (a typo would otherwise surface only as a
// nil call inside Redis).
func helpersFor(all []helper, body string) ([]helper, error) {
	byName := map[string]*helper{}
	for i := range all {
		byName[all[i].name] = &all[i]
	}
	need := map[string]bool{}
	var visit func(name string) error
	visit = func(name string) error {
		if need[name] {
			return nil
		}
		h, ok := byName[name]
		if !ok {
			return fmt.Errorf("uses %s, which %s does not define", name, PreludeFile)
		}
		need[name] = true
		for _, u := range h.uses {
			if err := visit(u); err != nil {
				return err
			}
		}
		return nil
	}
	for _, name := range references(strings.Split(body, "\n")) {
		if err := visit(name); err != nil {
			return nil, err
		}
	}
	var out []helper
	for _, h := range all {
		if need[h.name] {
			out = append(out, h)
		}
	}
	return out, nil
}
