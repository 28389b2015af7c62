package annotation

import (
	goparser "go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"
)

func TestFindLookalikes(t *testing.T) {
	tests := []struct {
		text, wrote, why, want string
	}{
		{"// lock:mutex key=a:<id>", "// lock:", "a space after //", "//lock:mutex key=a:<id>"},
		{"//Lock:mutex key=a", "//Lock:", "upper case", "//lock:mutex key=a"},
		{"//lock:Mutex key=a", "", "", ""}, // an annotation: the parser reports the kind
		{"/* lock:mutex key=a */", "/* lock:", "a /* */ comment", "//lock:mutex key=a"},
		{"/*lock:fair key=b lease=1s*/", "/*lock:", "a /* */ comment", "//lock:fair key=b lease=1s"},
		{"//lockgen:mutex key=a", "//lockgen:", "lockgen instead of lock", "//lock:mutex key=a"},
		{"// @lock mutex key=a", "// @lock", "a space after //, a @ before lock, no colon after lock", "//lock:mutex key=a"},
		{"//LOCK: MUTEX key = a", "//LOCK:", "upper case, spaces around the colon", "//lock:mutex key=a"},
		{"// lock: key=a", "// lock:", "a space after //, spaces around the colon", "//lock:<kind> key=a"},
		{"//\tlock:semaphore key=s permits=2", "//\tlock:", "a space after //", "//lock:semaphore key=s permits=2"},
		// prose stays prose
		{"// lock: mutex guarding m", "", "", ""},
		{"// Lock: the mutex guards n.", "", "", ""},
		{"// Locker: mutex key=a", "", "", ""},
		{"// lock:mutexes are fun", "", "", ""},
		{"// see //lock:mutex key=x", "", "", ""},
	}
	for _, tt := range tests {
		got := FindLookalikes(tt.text)
		if tt.want == "" {
			if len(got) != 0 {
				t.Errorf("%q: got %+v, want none", tt.text, got)
			}
			continue
		}
		if len(got) != 1 || got[0].Wrote != tt.wrote || got[0].Why != tt.why || got[0].Want != tt.want {
			t.Errorf("%q: got %+v, want wrote %q why %q want %q", tt.text, got, tt.wrote, tt.why, tt.want)
		}
	}
}

func TestFindLookalikesBlockLines(t *testing.T) {
	text := "/*\n * Pay pays.\n * lock:fair key=pay:<id>\n * lock:read key=r\n */"
	got := FindLookalikes(text)
	if len(got) != 2 {
		t.Fatalf("got %+v, want two lines", got)
	}
	if !strings.HasPrefix(text[got[0].Offset:], "* lock:fair") || !strings.HasPrefix(text[got[1].Offset:], "* lock:read") {
		t.Errorf("offsets %d, %d do not point at their lines", got[0].Offset, got[1].Offset)
	}
}

// TestScanPlaces checks what Scan takes and where it says a misplaced
// annotation is.
func TestScanPlaces(t *testing.T) {
	src := `// lock:mutex key=pkg
package p

type S struct {
	//lock:mutex key=f
	mu int
	n  int // lock:mutex key=t
}

//lock:mutex key=a
//lock:read key=b
func (s *S) A() {}

//lock:mutex key=gone

func (s *S) B() {}

func F() {
	//lock:mutex key=in
}

type I interface {
	//lock:mutex key=i
	M()
	N() //lock:mutex key=n
}

var (
	//lock:mutex key=v
	v int
)
`
	fset := token.NewFileSet()
	file, err := goparser.ParseFile(fset, "p.go", src, goparser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	methods, problems := Scan(file)
	if len(methods) != 2 || methods[0].Recv != "S" || methods[0].Name.Name != "A" || len(methods[0].Comments) != 2 ||
		methods[1].Recv != "I" || methods[1].Name.Name != "M" || methods[1].Interface == nil {
		t.Errorf("methods = %+v", methods)
	}
	want := []string{
		"1:1 this comment is on the package clause",
		"5:2 on field mu of S",
		"7:9 this comment is on field n of S",
		"14:1 a blank line separates it from method B below",
		"19:2 inside function F",
		"25:6 after method N of interface I",
		"29:2 on var v",
	}
	if len(problems) != len(want) {
		t.Fatalf("got %d problems, want %d: %+v", len(problems), len(want), problems)
	}
	for i, p := range problems {
		pos := fset.Position(p.Pos)
		at := strings.SplitN(want[i], " ", 2)
		if got := strconv.Itoa(pos.Line) + ":" + strconv.Itoa(pos.Column); got != at[0] || !strings.Contains(p.Msg, at[1]) {
			t.Errorf("problem %d at %s: %s; want at %s, containing %q", i, got, p.Msg, at[0], at[1])
		}
	}
}
