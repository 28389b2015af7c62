package gopherlua_test

import "testing"

// TestMatchWakes checks the harness's own comparison of wake messages,
// which stands in for exact strings where a grant carries a clock fence.
func TestMatchWakes(t *testing.T) {
	const f1, f2 = "1700000000000001", "1700000000000002"
	cases := []struct {
		name   string
		want   []string
		handed []string
		got    []string
		ok     bool
	}{
		// B was granted f1 (grantedTo, below), C f2.
		{"taken", []string{grantWake("B"), takenWake("B")}, nil, []string{"grant:" + f1 + ":B", "taken:" + f1}, true},
		{"taken, another's fence", []string{takenWake("B")}, nil, []string{"taken:" + f2}, false},
		{"taken, no fence granted", []string{takenWake("B")}, nil, []string{"taken:1700000000000003"}, false},
		{"taken, not a fence", []string{takenWake("B")}, nil, []string{"taken:x"}, false},
		{"taken missing", []string{takenWake("B")}, nil, []string{"all"}, false},
		{"exact", []string{"n:1", "all"}, nil, []string{"n:1", "all"}, true},
		{"none", nil, nil, nil, true},
		{"extra message", nil, nil, []string{"n:1"}, false},
		{"grants", []string{grantWake("B"), grantWake("C")}, nil, []string{"grant:" + f1 + ":B", "grant:" + f2 + ":C"}, true},
		{"holder with colons", []string{grantWake("h:1")}, nil, []string{"grant:" + f1 + ":h:1"}, true},
		{"other holder", []string{grantWake("B")}, nil, []string{"grant:" + f1 + ":C"}, false},
		{"fence not a number", []string{grantWake("B")}, nil, []string{"grant:x:B"}, false},
		{"fence with sign", []string{grantWake("B")}, nil, []string{"grant:+" + f1 + ":B"}, false},
		{"fences must rise", []string{grantWake("B"), grantWake("C")}, nil, []string{"grant:" + f2 + ":B", "grant:" + f1 + ":C"}, false},
		{"pattern is no literal", []string{grantWake("B")}, nil, []string{"grant:*:B"}, false},
		{"hand-over announced", []string{grantWake("B")}, []string{"grant:" + f1 + ":B"}, []string{"grant:" + f1 + ":B"}, true},
		{"hand-over with another fence", []string{grantWake("B")}, []string{"grant:" + f2 + ":B"}, []string{"grant:" + f1 + ":B"}, false},
	}
	for _, c := range cases {
		r := &run{sc: &scenario{name: c.name, fam: mutexFamily, wakes: c.want}, handed: c.handed,
			grantedTo: map[int64]string{1700000000000001: "B/mutex", 1700000000000002: "C/mutex"}}
		if err := r.matchWakes(c.got); (err == nil) != c.ok {
			t.Errorf("%s: matchWakes(%q) against %q = %v, want ok=%v", c.name, c.got, c.want, err, c.ok)
		}
	}
}
