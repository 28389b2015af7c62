package annotation

import (
	"go/ast"
	"go/token"
	"strings"
)

// Method is a method whose doc comment holds annotations.
type Method struct {
	Recv      string         // the receiver's base type name, or the interface's name
	Name      *ast.Ident     // the method's name
	Interface *ast.TypeSpec  // the interface declaring it; nil for a method declaration
	Comments  []*ast.Comment // the annotation lines, in source order
}

// Problem is a comment line that looks like an annotation and cannot be
// taken as one: misplaced, or misspelled.
type Problem struct {
	Pos token.Pos
	Msg string
}

// Scan reads every comment of a file. Annotations in the doc comment of a
// method (a method declaration, or a method of an interface type
// declaration) are returned by method; every other annotation, and every
// look-alike line anywhere, is a Problem that says how to write it. Nothing
// that looks like an annotation is silently ignored. Scan checks placement
// and spelling only: Parse checks the annotation itself.
func Scan(f *ast.File) ([]Method, []Problem) {
	s := &scanner{file: f, places: make(map[*ast.CommentGroup]place)}
	s.placeDocs()
	var methods []Method
	var problems []Problem
	for _, cg := range f.Comments {
		pl, ok := s.places[cg]
		if !ok {
			pl = s.enclosing(cg)
		}
		var taken []*ast.Comment
		for _, c := range cg.List {
			if Is(c.Text) {
				taken = append(taken, c)
				continue
			}
			for _, l := range FindLookalikes(c.Text) {
				problems = append(problems, Problem{Pos: c.Slash + token.Pos(l.Offset), Msg: lookalikeMessage(l, pl)})
			}
		}
		switch {
		case len(taken) == 0:
		case pl.method != nil:
			methods = append(methods, Method{Recv: pl.recv, Name: pl.method, Interface: pl.iface, Comments: taken})
		default:
			problems = append(problems, Problem{Pos: taken[0].Slash, Msg: misplacedMessage(pl)})
		}
	}
	return methods, problems
}

// place says where a comment group sits.
type place struct {
	desc   string        // "on function F", "on field mu of S", ...; "" for a method's doc
	hint   string        // more advice, or ""
	method *ast.Ident    // set for a method's doc comment
	recv   string        // the method's receiver base type or interface name
	iface  *ast.TypeSpec // the interface of an interface method
}

func misplacedMessage(pl place) string {
	msg := "//lock: annotation " + pl.desc + ": annotations belong in the doc comment of a method (of a concrete or interface type)"
	if pl.hint != "" {
		msg += "; " + pl.hint
	}
	return msg
}

func lookalikeMessage(l Lookalike, pl place) string {
	msg := quote(l.Wrote) + " is not read as an annotation (" + l.Why + "); write " + l.Want
	if pl.method == nil {
		msg += " in the doc comment of a method; this comment is " + pl.desc
		if pl.hint != "" {
			msg += " (" + pl.hint + ")"
		}
	}
	return msg
}

func quote(s string) string { return "\"" + s + "\"" }

type scanner struct {
	file   *ast.File
	places map[*ast.CommentGroup]place
}

func (s *scanner) set(cg *ast.CommentGroup, pl place) {
	if cg != nil {
		s.places[cg] = pl
	}
}

// placeDocs records every comment group that documents something.
func (s *scanner) placeDocs() {
	s.set(s.file.Doc, place{desc: "on the package clause"})
	for _, d := range s.file.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv != nil && len(d.Recv.List) > 0 {
				s.set(d.Doc, place{method: d.Name, recv: exprName(d.Recv.List[0].Type)})
			} else {
				s.set(d.Doc, place{desc: "on function " + d.Name.Name})
			}
		case *ast.GenDecl:
			if len(d.Specs) != 1 {
				s.set(d.Doc, place{desc: "on a group of " + d.Tok.String() + " declarations"})
			}
			for _, spec := range d.Specs {
				desc := specDesc(d, spec)
				if len(d.Specs) == 1 {
					s.set(d.Doc, place{desc: desc})
				}
				switch spec := spec.(type) {
				case *ast.TypeSpec:
					s.set(spec.Doc, place{desc: desc})
					s.set(spec.Comment, place{desc: desc})
					s.typeBody(spec)
				case *ast.ValueSpec:
					s.set(spec.Doc, place{desc: desc})
					s.set(spec.Comment, place{desc: desc})
				case *ast.ImportSpec:
					s.set(spec.Doc, place{desc: desc})
					s.set(spec.Comment, place{desc: desc})
				}
			}
		}
	}
}

func specDesc(d *ast.GenDecl, spec ast.Spec) string {
	switch spec := spec.(type) {
	case *ast.TypeSpec:
		return "on type " + spec.Name.Name
	case *ast.ValueSpec:
		names := make([]string, len(spec.Names))
		for i, n := range spec.Names {
			names[i] = n.Name
		}
		return "on " + d.Tok.String() + " " + strings.Join(names, ", ")
	}
	return "on an import"
}

// typeBody places the comments on fields and interface methods of a type
// declaration. Only the methods of the declared interface itself can be
// wrapped; those of an interface nested in a field cannot.
func (s *scanner) typeBody(ts *ast.TypeSpec) {
	ast.Inspect(ts.Type, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.StructType:
			for _, fd := range n.Fields.List {
				desc := "on embedded field " + exprName(fd.Type) + " of " + ts.Name.Name
				if len(fd.Names) > 0 {
					desc = "on field " + fd.Names[0].Name + " of " + ts.Name.Name
				}
				s.set(fd.Doc, place{desc: desc})
				s.set(fd.Comment, place{desc: desc, hint: "a comment on a field does not lock anything"})
			}
		case *ast.InterfaceType:
			top := n == ts.Type
			for _, fd := range n.Methods.List {
				switch {
				case len(fd.Names) == 0:
					s.set(fd.Doc, place{desc: "on an embedded interface", hint: "annotate the methods where that interface declares them"})
					s.set(fd.Comment, place{desc: "on an embedded interface", hint: "annotate the methods where that interface declares them"})
				case !top:
					desc := "on method " + fd.Names[0].Name + " of an interface inside type " + ts.Name.Name
					s.set(fd.Doc, place{desc: desc, hint: "only the methods of a declared interface type are wrapped"})
					s.set(fd.Comment, place{desc: desc, hint: "only the methods of a declared interface type are wrapped"})
				default:
					s.set(fd.Doc, place{method: fd.Names[0], recv: ts.Name.Name, iface: ts})
					s.set(fd.Comment, place{
						desc: "after method " + fd.Names[0].Name + " of interface " + ts.Name.Name,
						hint: "put it on the line above the method, in its doc comment",
					})
				}
			}
		}
		return true
	})
}

// enclosing places a comment group that documents nothing: inside a
// declaration, or between declarations.
func (s *scanner) enclosing(cg *ast.CommentGroup) place {
	for _, d := range s.file.Decls {
		if cg.Pos() >= d.End() {
			continue
		}
		if cg.Pos() > d.Pos() {
			return place{desc: "inside " + declDesc(d)}
		}
		// cg is before d and is not its doc comment.
		pl := place{desc: "not attached to any declaration"}
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv != nil && (fd.Doc == nil || fd.Doc.Pos() > cg.Pos()) {
			pl.hint = "a blank line separates it from method " + fd.Name.Name + " below, so it is not that method's doc comment"
		}
		return pl
	}
	return place{desc: "not attached to any declaration"}
}

func declDesc(d ast.Decl) string {
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv != nil && len(d.Recv.List) > 0 {
			return "method " + exprName(d.Recv.List[0].Type) + "." + d.Name.Name
		}
		return "function " + d.Name.Name
	case *ast.GenDecl:
		if len(d.Specs) == 1 {
			return strings.TrimPrefix(specDesc(d, d.Specs[0]), "on ")
		}
		return "a group of " + d.Tok.String() + " declarations"
	}
	return "a declaration"
}

// exprName names a type expression well enough for a message: T, *T, pkg.T
// and generic instantiations by their base name.
func exprName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.StarExpr:
		return exprName(e.X)
	case *ast.SelectorExpr:
		return exprName(e.X) + "." + e.Sel.Name
	case *ast.IndexExpr:
		return exprName(e.X)
	case *ast.IndexListExpr:
		return exprName(e.X)
	case *ast.ParenExpr:
		return exprName(e.X)
	}
	return "?"
}
