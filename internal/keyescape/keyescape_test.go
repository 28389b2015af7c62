package keyescape

import (
	"strings"
	"testing"
)

// Unreserved bytes pass as they are, every other byte as %XX in upper-case
// hex; a string with nothing to escape is returned as it is.
func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"":             "",
		"Order-42_a.~": "Order-42_a.~",
		"a:b":          "a%3Ab",
		"{x}":          "%7Bx%7D",
		"ä":            "%C3%A4",
		"%":            "%25",
		"a b/\x00\xff": "a%20b%2F%00%FF",
	} {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = Escape("order-42") }); n != 0 {
		t.Errorf("Escape of an unreserved string allocates %v times", n)
	}
}

// The two guarantees of the package doc, over every pair of values of up
// to two bytes from an alphabet that has the bytes that matter: no brace
// ever comes out, and with ':' between two values, different pairs render
// different keys.
func TestEscapeKeepsKeysApart(t *testing.T) {
	alphabet := []string{"a", ":", "%", "{", "}", "~", "3", "A", "\xff"}
	values := []string{""}
	for _, x := range alphabet {
		values = append(values, x)
		for _, y := range alphabet {
			values = append(values, x+y)
		}
	}
	seen := map[string][2]string{}
	for _, a := range values {
		for _, b := range values {
			key := Escape(a) + ":" + Escape(b)
			if strings.ContainsAny(key, "{}") {
				t.Fatalf("%q, %q rendered %q, with a brace", a, b, key)
			}
			if prev, ok := seen[key]; ok {
				t.Fatalf("%q, %q and %q, %q both render %q", prev[0], prev[1], a, b, key)
			}
			seen[key] = [2]string{a, b}
		}
	}
}
