package luacover

import (
	"reflect"
	"testing"
	"time"

	"github.com/lockgen/lockgen/luashim"
)

func newTestServer(t *testing.T) (*luashim.Server, *Recorder) {
	t.Helper()
	return NewServer(luashim.NewVirtualClock(time.Unix(1_700_000_000, 0)))
}

const branchy = `local n = tonumber(ARGV[1])
local function classify(x)
  if x > 0 then
    return 'positive'
  elseif x < 0 then
    return 'negative'
  end
  return 'zero'
end
for i = 1, 2 do
  if i == 3 then
    break
  end
end
return classify(n)
`

func TestCoverageRecordsBranches(t *testing.T) {
	s, rec := newTestServer(t)
	sha, err := s.Load("branchy", branchy)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load("", "return 1"); err != nil { // unnamed: not reported
		t.Fatal(err)
	}
	run := func(arg string, want string) {
		t.Helper()
		got, err := s.EvalSha(sha, nil, arg)
		if err != nil || got != want {
			t.Fatalf("classify(%s) = %#v, %v; want %q", arg, got, err, want)
		}
	}
	run("5", "positive")
	cov := rec.Coverage()
	if len(cov) != 1 || cov[0].Name != "branchy" {
		t.Fatalf("Coverage() = %+v, want one entry for branchy", cov)
	}
	wantExec := []int{1, 2, 3, 4, 5, 6, 8, 10, 11, 12, 15}
	if !reflect.DeepEqual(cov[0].Executable, wantExec) {
		t.Errorf("Executable = %v, want %v", cov[0].Executable, wantExec)
	}
	if want := []int{5, 6, 8, 12}; !reflect.DeepEqual(cov[0].Missed(), want) {
		t.Errorf("after a positive run Missed = %v, want %v", cov[0].Missed(), want)
	}
	run("-1", "negative")
	run("0", "zero")
	if want := []int{12}; !reflect.DeepEqual(rec.Coverage()[0].Missed(), want) {
		t.Errorf("after all classes Missed = %v, want %v", rec.Coverage()[0].Missed(), want)
	}
}

func TestInstrumentationKeepsSemantics(t *testing.T) {
	s, _ := newTestServer(t)
	cases := []struct {
		src  string
		want any
	}{
		{"local t = {}\nfor i = 1, 10 do\n  if i > 3 then break end\n  t[#t+1] = i\nend\nreturn t", []any{int64(1), int64(2), int64(3)}},
		{"local i = 0\nrepeat\n  local j = i + 1\n  i = j\nuntil j >= 4\nreturn i", int64(4)},
		{"local f = function(...) return select('#', ...) end\nreturn f(1, 2, 3)", int64(3)},
		{"return select('#', ...)", int64(0)},
		{"local t = {f = function() return 7 end}\nreturn t.f()", int64(7)},
		{"do return 1 end", int64(1)},
		{"local n = 0\nwhile true do\n  n = n + 1\n  if n == 5 then return n end\nend", int64(5)},
	}
	for _, c := range cases {
		got, err := s.Eval(c.src, nil)
		if err != nil {
			t.Errorf("%q: %v", c.src, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: got %#v, want %#v", c.src, got, c.want)
		}
	}
}

func TestRecorderIsNotReachable(t *testing.T) {
	s, _ := newTestServer(t)
	for _, src := range []string{"return _G", "return getfenv", "return rawget", "return setmetatable"} {
		if _, err := s.Eval(src, nil); err == nil {
			t.Errorf("%q succeeded; scripts must not reach the environment or metatables", src)
		}
	}
}
