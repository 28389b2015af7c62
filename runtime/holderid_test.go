package runtime

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
		{strings.Repeat("h", 100), strings.Repeat("h", maxHostPart)},
	} {
		if got := hostPart(c.host); got != c.part {
			t.Errorf("hostPart(%q) = %q, want %q", c.host, got, c.part)
		}
		next := holderIDs(c.host, math.MaxInt32)
		for range 3 {
			id := next()
			if err := checkHolderID(id); err != nil {
				t.Errorf("%v", err)
			}
			// The counter has at most 13 base-36 digits; the id has 1 now.
			if n := len(id) - 1 + 13; n > 64 {
				t.Errorf("id %q can grow to %d bytes, want at most 64", id, n)
			}
			if !strings.HasPrefix(id, c.part+":2147483647:") {
				t.Errorf("id %q, want it to start with the host part and the pid", id)
			}
		}
	}
}
