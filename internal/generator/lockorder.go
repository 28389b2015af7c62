package generator

import (
	"go/token"
	"go/types"
	"path/filepath"
	"sort"

	"golang.org/x/tools/go/packages"

	"github.com/lockgen/lockgen/internal/annotation"
)

// The lock-order check. Two code paths that take two locks in opposite
// orders deadlock across processes, and Redis cannot see it. lockgen sees
// every annotation of the packages it loads and go/types sees the calls, so
// it builds the graph "annotated method M, holding its locks L, calls (maybe
// through helpers) an annotated method N through its wrapper, which takes K"
// and reports a cycle in it. docs/generator.md ("Lock order") describes what
// the check follows and what it misses.
//
// The files:
//
//	lockorder.go        entry point, annotated methods and their lock sites
//	lockorder_recheck.go type-checking again with the new output in place
//	lockorder_keys.go   the order of the keys of one Acquire call
//	keypattern.go       when two key templates may render the same lock
//	lockorder_calls.go  function bodies, their calls, the locks each may take
//	lockorder_cycles.go the held-then-taken edges, their cycles, the message

// checkLockOrder runs the check over the packages of one Generate call,
// whose outputs are files. Wrapper types do not exist while lockgen loads a
// package (its earlier output is hidden), so calls through them are not
// typed; when any package refers to a generated name, the packages are
// type-checked again, in process, with their new output added.
func checkLockOrder(cfg Config, pkgs []*packages.Package, files []File) []Diagnostic {
	if refersToGeneratedNames(pkgs) {
		pkgs = recheckWithOutput(pkgs, files, cfg.Output)
	}
	o := newOrderCheck(pkgs, cfg.Output)
	o.computeAcquisitions()
	return o.cycleDiagnostics()
}

// refersToGeneratedNames reports whether some package used a name that only
// lockgen's output declares (the errors blockingErrors lets through).
func refersToGeneratedNames(pkgs []*packages.Package) bool {
	for _, p := range pkgs {
		for _, e := range p.Errors {
			if e.Kind == packages.TypeError && undefinedGeneratedName.MatchString(e.Msg) {
				return true
			}
		}
	}
	return false
}

// lockSite is one key= of an annotated method.
type lockSite struct {
	id       int // index into orderCheck.collide
	method   *lockedMethod
	template string
	pattern  keyPattern
	ignore   bool // order=ignore on its //lock: line
}

// lockedMethod is an annotated method (of a concrete or an interface type).
type lockedMethod struct {
	key   string // funcKey
	name  string // Type.Method, for messages
	pos   token.Position
	iface bool // declared in an interface: no body of its own
	locks []*lockSite
}

// orderCheck holds everything the check knows about the loaded packages.
type orderCheck struct {
	methods  map[string]*lockedMethod  // annotated methods by funcKey
	mOrder   []string                  // keys of methods, sorted
	wrappers map[string]string         // "path.TLocked" -> "path.T"
	promoted map[string]string         // "path.T.Method" of a wrapper method T does not declare -> funcKey of the method it runs
	bodies   map[string]*funcBody      // functions with a body, by funcKey
	order    []string                  // keys of bodies, sorted: deterministic iteration
	acq      map[string][]*acquisition // locks each body may take, first witness each
	acqSeen  map[string]map[*lockSite]bool
	sites    int    // lock sites numbered so far
	collide  []int8 // memo of mayCollide by site ids: 0 unknown, 1 no, 2 yes
}

func newOrderCheck(pkgs []*packages.Package, output string) *orderCheck {
	o := &orderCheck{
		methods:  make(map[string]*lockedMethod),
		wrappers: make(map[string]string),
		promoted: make(map[string]string),
		bodies:   make(map[string]*funcBody),
		acq:      make(map[string][]*acquisition),
		acqSeen:  make(map[string]map[*lockSite]bool),
	}
	for _, p := range pkgs {
		if p.TypesInfo == nil {
			continue
		}
		o.addAnnotated(p, output)
	}
	for _, p := range pkgs {
		if p.TypesInfo == nil {
			continue
		}
		o.addBodies(p, filepath.Join(packageDir(p), output))
	}
	for k := range o.bodies {
		o.order = append(o.order, k)
	}
	for k := range o.methods {
		o.mOrder = append(o.mOrder, k)
	}
	sort.Strings(o.mOrder)
	o.collide = make([]int8, o.sites*o.sites)
	sort.Strings(o.order)
	return o
}

// addAnnotated records every annotated method of p with its lock sites, and
// the wrapper type lockgen generates for each of their types with the
// methods that wrapper has. Generation succeeded before the check runs, so
// every annotation parses.
func (o *orderCheck) addAnnotated(p *packages.Package, output string) {
	a := newAnalysis(p, output)
	byType, _ := a.collectLoaded()
	a.index(byType)
	for tn, ams := range byType {
		for i := range ams {
			o.addMethod(p, &ams[i])
		}
		named, ok := tn.Type().(*types.Named)
		if !ok {
			continue // an alias: refused by generation, no wrapper
		}
		wrapped := p.PkgPath + "." + tn.Name()
		o.wrappers[wrapped+"Locked"] = wrapped
		o.addPromoted(a, tn, named, wrapped)
	}
}

// addPromoted records the methods of tn's wrapper that tn does not declare:
// those promoted from embedded fields or embedded interfaces. The wrapper
// method takes the locks of the method it is promoted from (whose
// annotations may be in another package, read from source as generation
// does) and then runs that method's body.
func (o *orderCheck) addPromoted(a *analysis, tn *types.TypeName, named *types.Named, wrapped string) {
	methods, _ := a.wrapperMethods(tn, named, types.IsInterface(named))
	for _, wm := range methods {
		if declaredOn(wm.fn, tn) {
			continue
		}
		o.promoted[wrapped+"."+wm.fn.Name()] = funcKey(wm.fn)
		if wm.am != nil {
			o.addMethod(a.pkg, wm.am)
		}
	}
}

// addMethod records one annotated method and its lock sites, once: a
// method promoted into several wrappers, or also loaded itself, is one
// method with one set of locks.
func (o *orderCheck) addMethod(p *packages.Package, am *annotatedMethod) {
	key := funcKey(am.fn)
	if o.methods[key] != nil {
		return
	}
	recv := receiverTypeName(am.fn.Origin())
	m := &lockedMethod{
		key:   key,
		name:  recv.Name() + "." + am.fn.Name(),
		pos:   p.Fset.Position(am.name.Pos()),
		iface: types.IsInterface(recv.Type()),
	}
	for _, c := range am.comments {
		ann, errs := annotation.Parse(c.Text)
		if len(errs) > 0 {
			continue
		}
		for _, t := range ann.Keys {
			m.locks = append(m.locks, &lockSite{id: o.sites, method: m, template: t.Source, pattern: newKeyPattern(ann.Kind, t), ignore: ann.OrderIgnore})
			o.sites++
		}
	}
	o.methods[key] = m
}

// funcKey names a function or method across loads and packages: the same
// method loaded from source and from export data gets the same key.
func funcKey(fn *types.Func) string {
	fn = fn.Origin()
	path := ""
	if fn.Pkg() != nil {
		path = fn.Pkg().Path()
	}
	if tn := receiverTypeName(fn); tn != nil {
		return path + "." + tn.Name() + "." + fn.Name()
	}
	return path + "." + fn.Name()
}

// mayCollide memoises mayCollide for lock sites.
func (o *orderCheck) mayCollide(a, b *lockSite) bool {
	k := a.id*o.sites + b.id
	if o.collide[k] == 0 {
		o.collide[k] = 1
		if mayCollide(a.pattern, b.pattern) {
			o.collide[k] = 2
		}
	}
	return o.collide[k] == 2
}
