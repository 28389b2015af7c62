package inspectwire

import (
	"reflect"
	"testing"
	"time"
)

// A reply with holders, waiters and a claim reads as what is left against
// the server's now, entries in the order sent.
func TestDecodeReadsEveryPart(t *testing.T) {
	reply := []any{int64(1000), int64(42),
		[]any{"w", "write", int64(41), int64(1500), "r", "read", int64(42), int64(3000)},
		[]any{"a", int64(1200), "b", int64(900)},
		[]any{"c", int64(1700)}}
	got, err := Decode(reply)
	want := Reply{LastFence: 42,
		Holders: []Holder{{"w", "write", 41, 500 * time.Millisecond}, {"r", "read", 42, 2 * time.Second}},
		Waiters: []Waiter{{"a", 200 * time.Millisecond}, {"b", -100 * time.Millisecond}},
		Claim:   &Waiter{"c", 700 * time.Millisecond}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("Decode = %+v, %v; want %+v", got, err, want)
	}
}

// A lock that left nothing in Redis: no holders, waiters or claim, fence 0.
func TestDecodeEmpty(t *testing.T) {
	got, err := Decode([]any{int64(5), int64(0), []any{}, []any{}, []any{}})
	if err != nil || !reflect.DeepEqual(got, Reply{}) {
		t.Errorf("Decode(empty) = %+v, %v", got, err)
	}
}

// Anything that is not a shape the scripts send is an error, never half
// read.
func TestDecodeRefusesOtherShapes(t *testing.T) {
	ok := func() []any {
		return []any{int64(1), int64(2), []any{"h", "mutex", int64(2), int64(9)}, []any{"a", int64(3)}, []any{}}
	}
	if _, err := Decode(ok()); err != nil {
		t.Fatalf("the base reply: %v", err)
	}
	bad := map[string]any{
		"not a list":        "x",
		"four parts":        ok()[:4],
		"six parts":         append(ok(), []any{}),
		"now a string":      func() []any { r := ok(); r[0] = "1"; return r }(),
		"fence a string":    func() []any { r := ok(); r[1] = "2"; return r }(),
		"holders not list":  func() []any { r := ok(); r[2] = int64(0); return r }(),
		"holder of three":   func() []any { r := ok(); r[2] = []any{"h", "mutex", int64(2)}; return r }(),
		"unknown side":      func() []any { r := ok(); r[2] = []any{"h", "rw", int64(2), int64(9)}; return r }(),
		"fence of a holder": func() []any { r := ok(); r[2] = []any{"h", "mutex", "2", int64(9)}; return r }(),
		"odd waiters":       func() []any { r := ok(); r[3] = []any{"a"}; return r }(),
		"waiter id number":  func() []any { r := ok(); r[3] = []any{int64(1), int64(3)}; return r }(),
		"two claims":        func() []any { r := ok(); r[4] = []any{"c", int64(1), "d", int64(2)}; return r }(),
		"claim deadline":    func() []any { r := ok(); r[4] = []any{"c", "1"}; return r }(),
	}
	for name, reply := range bad {
		if got, err := Decode(reply); err == nil {
			t.Errorf("%s: Decode(%#v) = %+v; want an error", name, reply, got)
		}
	}
}
