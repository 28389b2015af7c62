package generator

import (
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
)

// orderEdge says: a caller holding held may take want, along path (the
// first hop is the call in the holder's body).
type orderEdge struct {
	held, want *lockSite
	path       []hop
}

// edges lists, for every annotated method with a body, each lock it holds
// against each lock its body may take. A pair that may be the same lock is
// left out: nesting inside one key template is either re-entry (same key,
// same call chain) or two keys of one template, which the check cannot
// order (see docs/generator.md).
func (o *orderCheck) edges() []orderEdge {
	var out []orderEdge
	for _, k := range o.order {
		m := o.methods[k]
		if m == nil {
			continue
		}
		for _, a := range o.acq[k] {
			for _, h := range m.locks {
				if h.ignore || o.mayCollide(h, a.site) {
					continue
				}
				out = append(out, orderEdge{held: h, want: a.site, path: a.path})
			}
		}
	}
	return out
}

// cycleDiagnostics reports one cycle per strongly connected component of
// the graph whose nodes are edges, with an arc e -> f when e's wanted lock
// may be f's held one: such a cycle is a set of call paths that, run at the
// same time, can each wait for a lock the next one holds.
func (o *orderCheck) cycleDiagnostics() []Diagnostic {
	edges := o.edges()
	next := make([][]int, len(edges))
	for i := range edges {
		for j := range edges {
			if i != j && o.mayCollide(edges[i].want, edges[j].held) {
				next[i] = append(next[i], j)
			}
		}
	}
	var diags []Diagnostic
	for _, comp := range stronglyConnected(next) {
		if len(comp) < 2 {
			continue
		}
		cycle := shortestCycle(next, comp, edges)
		ordered := make([]orderEdge, len(cycle))
		for i, e := range cycle {
			ordered[i] = edges[e]
		}
		diags = append(diags, cycleDiagnostic(ordered))
	}
	return diags
}

// stronglyConnected returns the strongly connected components of the graph
// (Tarjan's algorithm), each as its node indices.
func stronglyConnected(next [][]int) [][]int {
	index := make([]int, len(next))
	low := make([]int, len(next))
	onStack := make([]bool, len(next))
	for i := range index {
		index[i] = -1
	}
	var stack []int
	var comps [][]int
	counter := 0
	var visit func(v int)
	visit = func(v int) {
		index[v], low[v] = counter, counter
		counter++
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range next[v] {
			if index[w] < 0 {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] != index[v] {
			return
		}
		var comp []int
		for {
			w := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			onStack[w] = false
			comp = append(comp, w)
			if w == v {
				break
			}
		}
		comps = append(comps, comp)
	}
	for v := range next {
		if index[v] < 0 {
			visit(v)
		}
	}
	return comps
}

// shortestCycle finds a shortest cycle inside comp through its first edge
// in source order (breadth-first), so the report is stable and short.
func shortestCycle(next [][]int, comp []int, edges []orderEdge) []int {
	in := make(map[int]bool, len(comp))
	start := comp[0]
	for _, v := range comp {
		in[v] = true
		if positionBefore(edges[v].path[0].callPos, edges[start].path[0].callPos) {
			start = v
		}
	}
	parent := map[int]int{start: -1}
	queue := []int{start}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		for _, w := range next[v] {
			if w == start {
				cycle := []int{}
				for u := v; u != -1; u = parent[u] {
					cycle = append([]int{u}, cycle...)
				}
				return cycle
			}
			if _, seen := parent[w]; !seen && in[w] {
				parent[w] = v
				queue = append(queue, w)
			}
		}
	}
	return []int{start} // unreachable: start lies on a cycle of its component
}

// cycleDiagnostic words a cycle, at the call of its first path:
//
//	lock order cycle: A.Refund takes payment:<id> then calls A.Pay (a.go:12), which
//	takes order:<id>; A.Ship takes order:<id> then, at a.go:60:2, calls ...
func cycleDiagnostic(cycle []orderEdge) Diagnostic {
	at := cycle[0].path[0].callPos
	dir := filepath.Dir(at.Filename)
	parts := make([]string, len(cycle))
	for i, e := range cycle {
		var b strings.Builder
		b.WriteString(e.held.method.name + " takes " + e.held.template + " then")
		if i > 0 {
			b.WriteString(", at " + shortPosition(dir, e.path[0].callPos, true) + ",")
		}
		for j, h := range e.path {
			if j > 0 {
				b.WriteString(", which")
			}
			b.WriteString(" calls " + h.callee + " (" + shortPosition(dir, h.calleePos, false) + ")")
		}
		b.WriteString(", which takes " + e.want.template)
		parts[i] = b.String()
	}
	msg := "lock order cycle: " + strings.Join(parts, "; ") +
		"; run at the same time, these calls can deadlock (take the locks in one order, or add order=ignore to one of these //lock: lines if the calls never overlap)"
	return Diagnostic{Pos: at, Msg: msg}
}

// shortPosition is file:line (with :col when withColumn), the file relative
// to dir when it lies there or below, else as it is.
func shortPosition(dir string, p token.Position, withColumn bool) string {
	name := p.Filename
	if rel, err := filepath.Rel(dir, name); err == nil && !strings.HasPrefix(rel, "..") {
		name = rel
	}
	s := name + ":" + strconv.Itoa(p.Line)
	if withColumn {
		s += ":" + strconv.Itoa(p.Column)
	}
	return s
}

// positionBefore orders positions by file, then offset.
func positionBefore(a, b token.Position) bool {
	if a.Filename != b.Filename {
		return a.Filename < b.Filename
	}
	return a.Offset < b.Offset
}
