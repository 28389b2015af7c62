package holderid

import (
	"math"
	"strings"
	"testing"
)

// The host part of a default holder id is escaped to the holder alphabet
// and bounded, so that every id passes the scripts' check.
func TestDefaultHolderIDsAreValidAndBounded(t *testing.T) {
	for _, c := range []struct{ host, part string }{
		{"web-3.eu.example.com", "web-3.eu.example.com"},
		{"", "unknown"},
		{"my host:1/ä~", "my_host_1____"},
		{strings.Repeat("h", 100), strings.Repeat("h", MaxHostPart)},
	} {
		if got := HostPart(c.host); got != c.part {
			t.Errorf("HostPart(%q) = %q, want %q", c.host, got, c.part)
		}
		next := New(c.host, math.MaxInt32)
		for range 3 {
			id := next()
			if err := Check(id); err != nil {
				t.Errorf("%v", err)
			}
			// The counter has at most 13 base-36 digits; the id has 1 now.
			if n := len(id) - 1 + 13; n > MaxLen {
				t.Errorf("id %q can grow to %d bytes, want at most %d", id, n, MaxLen)
			}
			if !strings.HasPrefix(id, c.part+":2147483647:") {
				t.Errorf("id %q, want it to start with the host part and the pid", id)
			}
		}
	}
}

// Two sources on one host and pid never share ids, and one source counts.
func TestSourcesDiffer(t *testing.T) {
	a, b := New("h", 1), New("h", 1)
	a1, a2, b1 := a(), a(), b()
	if a1 == a2 || a1 == b1 || !strings.HasSuffix(a1, ":1") || !strings.HasSuffix(a2, ":2") {
		t.Errorf("ids %q, %q (one source), %q (another)", a1, a2, b1)
	}
}

// Check takes 1 to 64 bytes of [A-Za-z0-9._:-], nothing else.
func TestCheck(t *testing.T) {
	for _, ok := range []string{"a", "web-3.eu:4711:ab:1", "A_Z.0-9:", strings.Repeat("x", MaxLen)} {
		if err := Check(ok); err != nil {
			t.Errorf("Check(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", strings.Repeat("x", MaxLen+1), "a b", "a~b", "a{b}", "ä", "a/b"} {
		if err := Check(bad); err == nil {
			t.Errorf("Check(%q) accepted", bad)
		}
	}
}
