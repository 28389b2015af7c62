package generator

import (
	"go/token"
	"sort"
)

// DefaultOutput is the output file name used when Config.Output is empty.
const DefaultOutput = "lock_gen.go"

// Config says what to generate.
type Config struct {
	Dir      string   // working directory for package patterns; "" = current
	Patterns []string // package patterns; empty = "."
	Output   string   // output file name inside each package directory; "" = DefaultOutput
	Env      []string // environment for the go command; nil = os.Environ()
}

// File is one output file.
type File struct {
	Path    string // absolute path
	Content []byte // nil: the file exists, was written by lockgen, and is no longer needed
}

// Diagnostic is one problem in the user's code or annotations.
type Diagnostic struct {
	Pos token.Position
	Msg string
}

func (d Diagnostic) String() string {
	return d.Pos.String() + ": " + d.Msg
}

// sortDiagnostics orders by file, line, column, then message, and drops exact
// duplicates (go/packages can report one error for several packages).
func sortDiagnostics(ds []Diagnostic) []Diagnostic {
	sort.SliceStable(ds, func(i, j int) bool {
		a, b := ds[i].Pos, ds[j].Pos
		if a.Filename != b.Filename {
			return a.Filename < b.Filename
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Column != b.Column {
			return a.Column < b.Column
		}
		return ds[i].Msg < ds[j].Msg
	})
	out := ds[:0]
	for i, d := range ds {
		if i > 0 && d == ds[i-1] {
			continue
		}
		out = append(out, d)
	}
	return out
}
