package generator

import (
	"go/ast"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/packages"
	"golang.org/x/tools/go/types/typeutil"
)

// funcBody is a function or method declared with a body in a loaded
// package, and the calls in it that the check follows.
type funcBody struct {
	name  string // Type.Method or function name, for messages
	pos   token.Position
	calls []callSite
}

// callSite is one call in a body.
type callSite struct {
	pos    token.Position
	callee string // funcKey of the called function (for a wrapper: of the wrapped method)
	locks  bool   // the call takes the callee's locks: through its wrapper or its annotated interface
}

// hop is one call on the way from a body to a lock it takes.
type hop struct {
	callPos   token.Position
	callee    string // name, for messages
	calleePos token.Position
}

// acquisition is a lock a body may take, with one call path that takes it:
// the call via, then (when rest is set) the path of the callee's own
// acquisition. Sharing the callee's path keeps each acquisition O(1).
type acquisition struct {
	site *lockSite
	via  hop
	rest *acquisition
}

// path lists the calls from the body to the lock.
func (a *acquisition) path() []hop {
	var out []hop
	for ; a != nil; a = a.rest {
		out = append(out, a.via)
	}
	return out
}

// addBodies records the bodies of p's functions and methods, skipping the
// output file (wrapper calls are modelled directly).
func (o *orderCheck) addBodies(p *packages.Package, outputPath string) {
	for _, file := range p.Syntax {
		if p.Fset.Position(file.Package).Filename == outputPath {
			continue
		}
		for _, decl := range file.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			fn, ok := p.TypesInfo.Defs[fd.Name].(*types.Func)
			if !ok {
				continue
			}
			b := &funcBody{name: fn.Name(), pos: p.Fset.Position(fd.Name.Pos())}
			if tn := receiverTypeName(fn); tn != nil {
				b.name = tn.Name() + "." + fn.Name()
			}
			b.calls = o.calls(p, fd.Body)
			o.bodies[funcKey(fn)] = b
		}
	}
}

// calls lists the calls of body in source order. Calls inside function
// literals and go statements are not followed: a closure may run anywhere,
// and a new goroutine does not hold the caller's locks while it waits.
// Deferred calls are followed: they run before the wrapper releases.
func (o *orderCheck) calls(p *packages.Package, body *ast.BlockStmt) []callSite {
	var out []callSite
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit, *ast.GoStmt:
			return false
		case *ast.CallExpr:
			fn, ok := typeutil.Callee(p.TypesInfo, n).(*types.Func)
			if !ok {
				return true
			}
			c := callSite{pos: p.Fset.Position(n.Pos()), callee: funcKey(fn)}
			if tn := receiverTypeName(fn); tn != nil && fn.Pkg() != nil {
				if wrapped, ok := o.wrappers[fn.Pkg().Path()+"."+tn.Name()]; ok {
					// A method of a generated wrapper: an annotated one
					// locks, the others delegate to the wrapped method.
					// One promoted from an embedded field or interface
					// runs (and, when annotated, takes the locks of)
					// the method it is promoted from.
					c.callee = wrapped + "." + fn.Name()
					if declarer, ok := o.promoted[c.callee]; ok {
						c.callee = declarer
					}
					c.locks = o.methods[c.callee] != nil
				}
			}
			if m := o.methods[c.callee]; m != nil && m.iface {
				// Through an annotated interface: the value may be the
				// decorator its constructor returns.
				c.locks = true
			}
			out = append(out, c)
		}
		return true
	})
	return out
}

// computeAcquisitions finds, for every body, the locks its calls may take:
// the locks of a method called through its wrapper or annotated interface,
// plus whatever the called body takes in turn. A method called directly
// (s.Pay on the receiver) takes no lock, but its body is followed. Bodies
// are visited callees first, so a call graph without recursion settles in
// one pass; passes repeat until nothing changes, so recursion terminates
// too. The first path found for a lock is kept as its witness.
func (o *orderCheck) computeAcquisitions() {
	order := o.calleesFirst()
	for changed := true; changed; {
		changed = false
		for _, k := range order {
			for _, c := range o.bodies[k].calls {
				if o.followCall(k, c) {
					changed = true
				}
			}
		}
	}
}

// calleesFirst orders the bodies by a depth-first post-order of the call
// graph, starting from each body in key order.
func (o *orderCheck) calleesFirst() []string {
	out := make([]string, 0, len(o.bodies))
	visited := make(map[string]bool, len(o.bodies))
	var visit func(k string)
	visit = func(k string) {
		b := o.bodies[k]
		if b == nil || visited[k] {
			return
		}
		visited[k] = true
		for _, c := range b.calls {
			visit(c.callee)
		}
		out = append(out, k)
	}
	for _, k := range o.order {
		visit(k)
	}
	return out
}

// followCall adds to the body k what call c may take; it reports whether
// anything was new.
func (o *orderCheck) followCall(k string, c callSite) bool {
	added := false
	if c.locks {
		m := o.methods[c.callee]
		h := hop{callPos: c.pos, callee: m.name, calleePos: m.pos}
		for _, s := range m.locks {
			if !s.ignore && o.addAcquisition(k, &acquisition{site: s, via: h}) {
				added = true
			}
		}
		return o.addThrough(k, c.callee, h) || added
	}
	if b := o.bodies[c.callee]; b != nil {
		return o.addThrough(k, c.callee, hop{callPos: c.pos, callee: b.name, calleePos: b.pos})
	}
	return false
}

// addThrough adds to k every acquisition of callee, reached through h.
func (o *orderCheck) addThrough(k, callee string, h hop) bool {
	added := false
	for _, a := range o.acq[callee] {
		if o.acqSeen[k][a.site] {
			continue
		}
		if o.addAcquisition(k, &acquisition{site: a.site, via: h, rest: a}) {
			added = true
		}
	}
	return added
}

func (o *orderCheck) addAcquisition(k string, a *acquisition) bool {
	seen := o.acqSeen[k]
	if seen == nil {
		seen = make(map[*lockSite]bool)
		o.acqSeen[k] = seen
	}
	if seen[a.site] {
		return false
	}
	seen[a.site] = true
	o.acq[k] = append(o.acq[k], a)
	return true
}
