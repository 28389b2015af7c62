package protocol

import (
	"testing"
	"time"
)

// A busy reply's tail names the holder and what is left of its lease, or
// nothing; a tail that is neither is not a reply any script sends.
func TestParseAcquireBusyTail(t *testing.T) {
	cases := []struct {
		reply any
		want  Acquire
	}{
		{[]any{int64(0), int64(7)}, Acquire{Flag: AcquireBusy, N: 7}},
		{[]any{int64(0), int64(7), "h"}, Acquire{Flag: AcquireBusy, N: 7, Holder: "h"}},
		{[]any{int64(0), int64(7), "h", int64(30)}, Acquire{Flag: AcquireBusy, N: 7, Holder: "h", HolderLeft: 30 * time.Millisecond}},
		{[]any{int64(0), int64(7), "h", int64(-1)}, Acquire{Flag: AcquireBusy, N: 7, Holder: "h"}},
		{[]any{int64(0), int64(7), "h", int64(30), int64(1700000000123)}, Acquire{Flag: AcquireBusy, N: 7, Holder: "h", HolderLeft: 30 * time.Millisecond, ServerNow: 1700000000123}},
	}
	for _, c := range cases {
		got, err := ParseAcquire(c.reply)
		if err != nil || got != c.want || got.Granted() {
			t.Errorf("ParseAcquire(%#v) = %+v, %v; want %+v", c.reply, got, err, c.want)
		}
	}
	for _, reply := range []any{[]any{int64(0), int64(7), ""}, []any{int64(0), int64(7), "h", "30"}, []any{int64(1), int64(7), "h"},
		[]any{int64(0), int64(7), "h", int64(30), "1700000000123"}, []any{int64(0), int64(7), "h", int64(30), int64(0)},
		[]any{int64(0), int64(7), "h", int64(30), int64(1), int64(2)}} {
		if _, err := ParseAcquire(reply); err == nil {
			t.Errorf("ParseAcquire(%#v) accepted a reply no script sends", reply)
		}
	}
}

// A release reply says released as 1 or as the grant that handed the lock
// on; 0 and anything else say not.
func TestReleasedBy(t *testing.T) {
	if g, ok := ReleasedBy(int64(1)); !ok || g != "" {
		t.Errorf("1: %q, %v", g, ok)
	}
	if g, ok := ReleasedBy("grant:12:h2"); !ok || g != "grant:12:h2" {
		t.Errorf("grant: %q, %v", g, ok)
	}
	for _, r := range []any{int64(0), "all", nil} {
		if _, ok := ReleasedBy(r); ok {
			t.Errorf("ReleasedBy(%#v) said released", r)
		}
	}
}

// The drift margin is 1% of the lease plus 2 ms.
func TestDriftMargin(t *testing.T) {
	if got := DriftMargin(10 * time.Second); got != 102*time.Millisecond {
		t.Errorf("DriftMargin(10s) = %v, want 102ms", got)
	}
}
