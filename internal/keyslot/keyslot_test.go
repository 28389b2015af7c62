package keyslot

import "testing"

// The expected slots were read from redis-server 7.0 with CLUSTER KEYSLOT
// (cluster-enabled instance).
func TestOfMatchesRedis(t *testing.T) {
	cases := map[string]int{
		"foo":                           12182,
		"bar":                           5061,
		"{user1000}.following":          3443,
		"{user1000}.followers":          3443,
		"foo{}{bar}":                    8363, // empty tag: whole key
		"foo{{bar}}zap":                 4015, // tag is "{bar"
		"foo{bar}{zap}":                 5061, // first tag only: "bar"
		"":                              0,
		"lockgen:mutex:{order:42}":      8691,
		"lockgen:mutex:{order:42}:wake": 8691,
		"{":                             4092,
		"}{":                            12793,
		"a{b":                           13340,
		"123456789":                     12739, // CRC16-XMODEM check value 0x31C3
	}
	for key, want := range cases {
		if got := Of(key); got != want {
			t.Errorf("Of(%q) = %d, want %d", key, got, want)
		}
	}
}

func TestHashTag(t *testing.T) {
	cases := []struct{ key, tag string }{
		{"plain", "plain"},
		{"a{b}c", "b"},
		{"a{}c{d}", "a{}c{d}"},
		{"{x}{y}", "x"},
		{"no}close{", "no}close{"},
	}
	for _, c := range cases {
		if got := hashTag(c.key); got != c.tag {
			t.Errorf("hashTag(%q) = %q, want %q", c.key, got, c.tag)
		}
	}
}
