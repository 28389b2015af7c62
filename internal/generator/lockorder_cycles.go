package generator

import (
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
)

// orderEdge says: a caller holding held may take want, along the path of
// its acquisition (the first hop is the call in the holder's body), or, when
// via is nil, in the same Acquire call, which takes its keys in sorted order
// and holds the first while it waits for the next.
type orderEdge struct {
	held, want *lockSite
	via        *acquisition
}

// pos is where the edge starts: the call, or the method taking both locks.
func (e *orderEdge) pos() token.Position {
	if e.via == nil {
		return e.held.method.pos
	}
	return e.via.via.callPos
}

// orderGraph is the lock-order graph in a form whose size stays linear in
// the edges: every lock site s has a node "held(s)" and a node "wanted(s)".
// An edge (held h, wanted w) is an arc held(h) -> wanted(w); an arc
// wanted(w) -> held(s) joins every s that may be the same lock as w. A
// cycle alternates the two arcs, and is a set of call paths that, run at
// the same time, can each wait for a lock the next one holds.
type orderGraph struct {
	sites []*lockSite
	index map[*lockSite]int
	next  [][]int               // node -> successors; node 2i is held(sites[i]), 2i+1 wanted(sites[i])
	edge  map[[2]int]*orderEdge // (held node, wanted node) -> the first edge found
}

func heldNode(i int) int   { return 2 * i }
func wantedNode(i int) int { return 2*i + 1 }

// graph builds the order graph: for every annotated method with a body,
// each lock it holds against each lock its body may take; for every method
// with several keys, each key against those its Acquire takes after it,
// when the templates fix that order. A pair that may be the same lock is
// left out: nesting inside one key template is either re-entry (same key,
// same call chain) or two keys of one template, which the check cannot
// order (see docs/generator.md).
func (o *orderCheck) graph() *orderGraph {
	g := &orderGraph{index: make(map[*lockSite]int), edge: make(map[[2]int]*orderEdge)}
	site := func(s *lockSite) int {
		i, ok := g.index[s]
		if !ok {
			i = len(g.sites)
			g.index[s] = i
			g.sites = append(g.sites, s)
			g.next = append(g.next, nil, nil)
		}
		return i
	}
	var heldSites, wantedSites []int
	isWanted := make(map[int]bool)
	add := func(h, w *lockSite, via *acquisition) {
		if h.ignore || w.ignore || o.mayCollide(h, w) {
			return
		}
		hi, wi := site(h), site(w)
		arc := [2]int{heldNode(hi), wantedNode(wi)}
		if g.edge[arc] != nil {
			return
		}
		g.edge[arc] = &orderEdge{held: h, want: w, via: via}
		if len(g.next[arc[0]]) == 0 {
			heldSites = append(heldSites, hi)
		}
		if !isWanted[wi] {
			isWanted[wi] = true
			wantedSites = append(wantedSites, wi)
		}
		g.next[arc[0]] = append(g.next[arc[0]], arc[1])
	}
	for _, k := range o.mOrder {
		m := o.methods[k]
		for _, a := range o.acq[k] {
			for _, h := range m.locks {
				add(h, a.site, a)
			}
		}
		for _, h := range m.locks {
			for _, w := range m.locks {
				if before, known := takenBefore(h.pattern, w.pattern); h != w && known && before {
					add(h, w, nil)
				}
			}
		}
	}
	for _, wi := range wantedSites {
		for _, hi := range heldSites {
			if o.mayCollide(g.sites[wi], g.sites[hi]) {
				g.next[wantedNode(wi)] = append(g.next[wantedNode(wi)], heldNode(hi))
			}
		}
	}
	return g
}

// cycleDiagnostics reports one cycle per strongly connected component of
// the order graph.
func (o *orderCheck) cycleDiagnostics() []Diagnostic {
	g := o.graph()
	var diags []Diagnostic
	for _, comp := range stronglyConnected(g.next) {
		if len(comp) < 2 {
			continue
		}
		diags = append(diags, cycleDiagnostic(g.shortestCycle(comp)))
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

// shortestCycle returns a shortest cycle of the component through its edge
// whose call comes first in the source (breadth-first from that edge's
// wanted node back to its held node), as edges in order.
func (g *orderGraph) shortestCycle(comp []int) []orderEdge {
	in := make(map[int]bool, len(comp))
	for _, v := range comp {
		in[v] = true
	}
	var first [2]int
	var firstEdge *orderEdge
	for _, v := range comp {
		if v%2 != 0 {
			continue
		}
		for _, w := range g.next[v] {
			e := g.edge[[2]int{v, w}]
			if in[w] && (firstEdge == nil || positionBefore(e.pos(), firstEdge.pos())) {
				first, firstEdge = [2]int{v, w}, e
			}
		}
	}
	parent := map[int]int{first[1]: -1}
	queue := []int{first[1]}
	for len(queue) > 0 {
		if _, found := parent[first[0]]; found {
			break
		}
		v := queue[0]
		queue = queue[1:]
		for _, w := range g.next[v] {
			if _, seen := parent[w]; !seen && in[w] {
				parent[w] = v
				queue = append(queue, w)
			}
		}
	}
	var nodes []int // held, wanted, held, wanted, ... back from first[0]
	for u := first[0]; u != -1; u = parent[u] {
		nodes = append([]int{u}, nodes...)
	}
	cycle := []orderEdge{*firstEdge}
	for i := 1; i+1 < len(nodes); i += 2 {
		cycle = append(cycle, *g.edge[[2]int{nodes[i], nodes[i+1]}])
	}
	return cycle
}

// cycleDiagnostic words a cycle, at the start of its first edge:
//
//	lock order cycle: A.Refund takes payment:<id> then calls A.Pay (a.go:12),
//	which takes order:<id>; A.Ship takes order:<id> then, at a.go:60:2, ...
func cycleDiagnostic(cycle []orderEdge) Diagnostic {
	at := cycle[0].pos()
	dir := filepath.Dir(at.Filename)
	parts := make([]string, len(cycle))
	for i := range cycle {
		parts[i] = edgePhrase(&cycle[i], dir, i == 0)
	}
	msg := "lock order cycle: " + strings.Join(parts, "; ") +
		"; run at the same time, these calls can deadlock (take the locks in one order, or add order=ignore to one of these //lock: lines if the calls never overlap)"
	return Diagnostic{Pos: at, Msg: msg}
}

// edgePhrase words one edge; the first one starts where the diagnostic
// points, so its start needs no position.
func edgePhrase(e *orderEdge, dir string, first bool) string {
	var b strings.Builder
	if e.via == nil {
		b.WriteString(e.held.method.name)
		if !first {
			b.WriteString(" (" + shortPosition(dir, e.pos(), false) + ")")
		}
		b.WriteString(" takes " + e.held.template + " then " + e.want.template + " in one call (a call takes its keys in sorted order)")
		return b.String()
	}
	b.WriteString(e.held.method.name + " takes " + e.held.template + " then")
	if !first {
		b.WriteString(", at " + shortPosition(dir, e.pos(), true) + ",")
	}
	for j, h := range e.via.path() {
		if j > 0 {
			b.WriteString(", which")
		}
		b.WriteString(" calls " + h.callee + " (" + shortPosition(dir, h.calleePos, false) + ")")
	}
	b.WriteString(", which takes " + e.want.template)
	return b.String()
}

// shortPosition is file:line (with :col when withColumn), the file relative
// to dir, the directory of the diagnostic's own file: a bare name for the
// same package, ../other/x.go for another.
func shortPosition(dir string, p token.Position, withColumn bool) string {
	name := p.Filename
	if rel, err := filepath.Rel(dir, name); err == nil {
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
