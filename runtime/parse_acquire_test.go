package runtime

import "testing"

// The exclusive scripts reply a grant as the bare fence, the others as
// {1, fence}; both read the same, and nothing else reads as a grant.
func TestParseAcquireReadsBothGrantForms(t *testing.T) {
	for _, reply := range []any{int64(42), []any{int64(1), int64(42)}} {
		flag, fence, _, err := parseAcquire(reply)
		if err != nil || flag != acquireGranted || fence != 42 {
			t.Errorf("parseAcquire(%#v) = %d, %d, %v; want a grant of fence 42", reply, flag, fence, err)
		}
	}
	for _, reply := range []any{int64(0), int64(-1), "42", []any{int64(1)}, []any{int64(2), int64(5)}} {
		if _, _, _, err := parseAcquire(reply); err == nil {
			t.Errorf("parseAcquire(%#v) accepted a reply no script sends", reply)
		}
	}
	flag, wait, by, err := parseAcquire([]any{int64(0), int64(7), "h", int64(30)})
	if err != nil || flag != acquireBusy || wait != 7 || by.id != "h" {
		t.Errorf("busy reply read as %d, %d, %+v, %v", flag, wait, by, err)
	}
}
