package annotation

import (
	"go/ast"
	goparser "go/parser"
	"go/token"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"//lock:mutex key=order:<id>",
		"//lock:fair key=a:<req.Tenant().ID>:b:<req.OrderID> lease=10s wait=0 renew=false",
		"//lock:semaphore key=jobs permits=3 onbusy=skip",
		"//lock:read key=<a>-<b>",
		"//lock:write key={x} key=<",
		"//lock:",
		"//lock:mutex key=<a.b().c()> lease=1h wait=1ms lease=2s",
		"//lock:spin key=a permits=-1 onbusy=x color=",
		"//lock:mutex\tkey=a\x00<é.ü()>",
		"// lock:mutex key=a:<id>",
		"//Lock:mutex key=a",
		"/* lock:mutex key=a */",
		"//lock:mutex key=\"a:<id>\" lease='1s'",
		"//lock:mutex key = a:<id> wait= 1s lease =2s",
		"//lock:mutex key:a:<id>",
		"//lock:mutex key=order:\"<id>\"",
		"//lock:mutex key=\"a b c\" permits=`2`",
		"//lock:mutex key=a order=ignore ordr=check order=",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		a, errs := Parse(text)
		for _, e := range errs {
			if e.Msg == "" {
				t.Fatalf("empty message for %q", text)
			}
			if e.Offset < 0 || (len(text) > 0 && e.Offset >= len(text)) || (len(text) == 0 && e.Offset != 0) {
				t.Fatalf("offset %d outside %q: %s", e.Offset, text, e.Msg)
			}
		}
		if len(errs) > 0 {
			return
		}
		// Accepted: the result must be self-consistent.
		if !validKind(a.Kind) || len(a.Keys) == 0 {
			t.Fatalf("accepted %q with kind %q and %d keys", text, a.Kind, len(a.Keys))
		}
		if (a.Kind == Semaphore) != (a.Permits >= 1) {
			t.Fatalf("accepted %q: kind %s with permits %d", text, a.Kind, a.Permits)
		}
		for _, k := range a.Keys {
			if !strings.HasPrefix(text[k.Offset:], k.Source) {
				t.Fatalf("template offset %d does not point at %q in %q", k.Offset, k.Source, text)
			}
			var rebuilt strings.Builder
			var prevPH bool
			for _, p := range k.Parts {
				if p.Placeholder == nil {
					if strings.ContainsAny(p.Literal, "{}<> \t") {
						t.Fatalf("accepted literal %q in %q", p.Literal, text)
					}
					rebuilt.WriteString(p.Literal)
					prevPH = false
					continue
				}
				if prevPH {
					t.Fatalf("accepted adjacent placeholders in %q", text)
				}
				prevPH = true
				rebuilt.WriteString("<" + p.Placeholder.Source + ">")
				if !utf8.ValidString(p.Placeholder.Root) || p.Placeholder.Root == "" {
					t.Fatalf("bad root %q", p.Placeholder.Root)
				}
			}
			if rebuilt.String() != k.Source {
				t.Fatalf("parts rebuild %q, source %q", rebuilt.String(), k.Source)
			}
		}
	})
}

// The look-alike oracle: the rule in FindLookalikes' documentation, written
// independently as regular expressions over the ASCII-lower-cased line.
var (
	kindAlt      = `(mutex|fair|read|write|semaphore)`
	lineLead     = `^[ \t]*[@+]?lock(gen)?`
	blockLead    = `^[ \t]*(\*[ \t]*)?[@+]?lock(gen)?`
	compactTail  = `[ \t]*:` + kindAlt + `([^a-z]|$)`
	kindKeyTail  = `[ \t]*:?[ \t]*` + kindAlt + `[^a-z](.*[^a-z])?key[ \t]*=`
	colonKeyTail = `[ \t]*:[ \t]*(.*[^a-z])?key[ \t]*=`
	lineOracle   = regexp.MustCompile(lineLead + `(` + compactTail + `|` + kindKeyTail + `|` + colonKeyTail + `)`)
	blockOracle  = regexp.MustCompile(blockLead + `(` + compactTail + `|` + kindKeyTail + `|` + colonKeyTail + `)`)
)

func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// oracleLines returns the offsets (in the comment text) of the lines of a
// comment that look like an annotation.
func oracleLines(text string) []int {
	var out []int
	switch {
	case strings.HasPrefix(text, "//"):
		if lineOracle.MatchString(asciiLower(text[2:])) {
			out = append(out, 0)
		}
	case strings.HasPrefix(text, "/*"):
		body := strings.TrimSuffix(text[2:], "*/")
		start := 2
		for _, line := range strings.Split(body, "\n") {
			if blockOracle.MatchString(asciiLower(line)) {
				out = append(out, start)
			}
			start += len(line) + 1
		}
	}
	return out
}

// FuzzLookalike: every comment line the oracle calls annotation-looking is
// either an annotation (Is) or reported as a look-alike on that line, and
// each suggestion is an annotation.
func FuzzLookalike(f *testing.F) {
	for _, seed := range []string{
		"// lock:mutex key=a:<id>", "//Lock:mutex key=a", "/* lock:mutex key=a */",
		"/*\n * Multi.\n * lock:fair key=m:<id>\n */", "//lockgen:mutex key=a", "// @lock mutex key=a",
		"//LOCK: MUTEX key = a", "// lock: key=a", "// lock: mutex guarding m", "// Locker: see mu",
		"//lock :semaphore", "// +lock:read", "//\tlock:write key=x", "// lock:mutexes", "//lockmutex key=a",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		found := FindLookalikes(text)
		if Is(text) && len(found) > 0 {
			t.Fatalf("%q is an annotation and a look-alike", text)
		}
		for _, l := range found {
			if !Is(l.Want) || l.Why == "" || l.Wrote == "" {
				t.Fatalf("%q: bad look-alike %+v", text, l)
			}
			if l.Offset < 0 || l.Offset >= len(text) {
				t.Fatalf("%q: offset %d out of range", text, l.Offset)
			}
		}
		if Is(text) {
			return
		}
		for _, at := range oracleLines(text) {
			lineEnd := strings.IndexByte(text[at:], '\n')
			if lineEnd < 0 {
				lineEnd = len(text) - at
			}
			from := at
			if at == 2 {
				from = 0 // a comment's first line is reported at the comment
			}
			covered := false
			for _, l := range found {
				covered = covered || (l.Offset >= from && l.Offset <= at+lineEnd)
			}
			if !covered {
				t.Fatalf("%q: line at %d looks like an annotation but is neither taken nor reported (found %+v)", text, at, found)
			}
		}
	})
}

// FuzzScan: in any Go file, every comment line that looks like an annotation
// (an exact //lock: line, or one the oracle matches) is either taken as the
// annotation of a method, in that method's doc comment, or reported. So no
// input makes lockgen accept a file while such a line was ignored.
func FuzzScan(f *testing.F) {
	for _, seed := range []string{
		"package p\n\ntype S struct {\n\t//lock:mutex key=f\n\tmu int // lock:mutex key=t\n}\n\n// lock:mutex key=a\nfunc (s *S) A() {}\n",
		"package p\n\n//lock:mutex key=a\nfunc (s *S) A() {}\n\n//lock:mutex key=b\n\nfunc (s *S) B() {}\n",
		"package p\n\ntype I interface {\n\t//lock:read key=i\n\tM()\n\tN() // lock:mutex key=n\n\tJ\n}\n",
		"package p\n\nfunc f() {\n\t/* lock:mutex key=x */\n\t//lock:fair key=y\n}\n\n//lock:mutex key=z\ntype T struct{}\n",
		"// lock:mutex key=pkg\npackage p\n\n/*\n * lock:semaphore key=s permits=2\n */\nfunc (T) M() {}\n",
		"package p\n\ntype G[K any] struct{ x interface{\n\t//lock:mutex key=n\n\tM() } }\n\n//lock:mutex key=g\nfunc (g G[K]) M() {}\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, src string) {
		fset := token.NewFileSet()
		file, err := goparser.ParseFile(fset, "f.go", src, goparser.ParseComments|goparser.SkipObjectResolution)
		if err != nil {
			return
		}
		methods, problems := Scan(file)
		taken := make(map[*ast.Comment]bool)
		docs := methodDocs(file)
		for _, m := range methods {
			for _, c := range m.Comments {
				if !Is(c.Text) || !docs[c] {
					t.Fatalf("took %q, which is not an annotation in a method's doc comment\n%s", c.Text, src)
				}
				taken[c] = true
			}
		}
		reported := func(cg *ast.CommentGroup) bool {
			for _, p := range problems {
				if p.Pos >= cg.Pos() && p.Pos < cg.End() {
					return true
				}
			}
			return false
		}
		for _, cg := range file.Comments {
			for _, c := range cg.List {
				looks := Is(c.Text) || len(oracleLines(c.Text)) > 0
				if looks && !taken[c] && !reported(cg) {
					t.Fatalf("%q looks like an annotation but was neither taken nor reported\n%s", c.Text, src)
				}
				if !Is(c.Text) && len(oracleLines(c.Text)) > 0 && !reportedAt(problems, c) {
					t.Fatalf("look-alike %q was not reported on its own comment\n%s", c.Text, src)
				}
			}
		}
	})
}

func reportedAt(problems []Problem, c *ast.Comment) bool {
	for _, p := range problems {
		if p.Pos >= c.Pos() && p.Pos < c.End() {
			return true
		}
	}
	return false
}

// methodDocs collects the comments of method doc comments: method
// declarations and the methods of declared interface types.
func methodDocs(file *ast.File) map[*ast.Comment]bool {
	out := make(map[*ast.Comment]bool)
	add := func(cg *ast.CommentGroup) {
		if cg != nil {
			for _, c := range cg.List {
				out[c] = true
			}
		}
	}
	for _, d := range file.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv != nil {
				add(d.Doc)
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				if ts, ok := s.(*ast.TypeSpec); ok {
					if it, ok := ts.Type.(*ast.InterfaceType); ok {
						for _, m := range it.Methods.List {
							if len(m.Names) > 0 {
								add(m.Doc)
							}
						}
					}
				}
			}
		}
	}
	return out
}
