// Package luacover records the line coverage of Lua scripts that run in the
// luashim Redis shim. gopher-lua has no debug hooks, so the server NewServer
// returns has its Recorder rewrite each parsed script as it is loaded: before every
// statement it inserts a store of the statement's line into a hit table
// held in a local that script code cannot name. Coverage then reports, per
// named script, the lines where statements start and those that ran.
package luacover

import (
	"sort"
	"sync"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"

	"github.com/lockgen/lockgen/luashim"
)

// ScriptCoverage is the line coverage of one named script: Executable
// lists the lines where a statement starts, Hit those whose statement ran
// at least once since the script was loaded. Both are sorted.
type ScriptCoverage struct {
	Name       string
	Executable []int
	Hit        []int
}

// Missed returns the executable lines that never ran.
func (c ScriptCoverage) Missed() []int {
	hit := make(map[int]bool, len(c.Hit))
	for _, l := range c.Hit {
		hit[l] = true
	}
	var out []int
	for _, l := range c.Executable {
		if !hit[l] {
			out = append(out, l)
		}
	}
	return out
}

// Recorder instruments the scripts one server compiles and keeps their hit
// tables. It belongs to one server because the tables are written under
// that server's lock.
type Recorder struct {
	mu      sync.Mutex
	scripts []*record // in load order
}

type record struct {
	name  string
	lines []int       // lines where statements start
	hits  *lua.LTable // line -> true, written by the instrumented code
}

// NewServer returns a luashim server on clock and the Recorder of the
// scripts it loads.
func NewServer(clock luashim.Clock) (*luashim.Server, *Recorder) {
	r := &Recorder{}
	return luashim.New(clock, luashim.WithTransform(r.transform)), r
}

// transform is the server's luashim.Transform: it returns chunk
// instrumented and the hit table the instrumented chunk expects as its
// argument. A script compiled without a name is instrumented (so all
// scripts run the same way) but not reported.
func (r *Recorder) transform(name string, chunk []ast.Stmt) ([]ast.Stmt, lua.LValue) {
	body, lines, vararg := instrument(chunk)
	rec := &record{name: name, lines: lines, hits: &lua.LTable{}}
	if name != "" {
		r.mu.Lock()
		r.scripts = append(r.scripts, rec)
		r.mu.Unlock()
	}
	return wrapChunk(body, vararg), rec.hits
}

// Coverage reports line coverage for every script compiled with a name,
// sorted by name. The hit tables are read without the server's lock, so
// call it when no script of the server is running.
func (r *Recorder) Coverage() []ScriptCoverage {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]ScriptCoverage, 0, len(r.scripts))
	for _, rec := range r.scripts {
		cov := ScriptCoverage{Name: rec.name, Executable: append([]int(nil), rec.lines...)}
		for _, l := range rec.lines {
			if rec.hits.RawGetInt(l) == lua.LTrue {
				cov.Hit = append(cov.Hit, l)
			}
		}
		out = append(out, cov)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
