package lua

import (
	"fmt"
	"strings"
	"testing"
)

// The Go constant and the prelude's must agree: tests and the runtime's
// documentation read the floor from FenceFloor, the scripts from
// LG_FLOOR_MS.
func TestFenceFloorMatchesThePrelude(t *testing.T) {
	want := fmt.Sprintf("local LG_FLOOR_MS = %d\n", FenceFloor.Milliseconds())
	if !strings.Contains(Prelude(), want) {
		t.Errorf("prelude.lua does not define %q", strings.TrimSpace(want))
	}
}

// The runtime dates a locally learnt mutex offer with MutexOffer, the
// release script with LG_OFFER_MS: they must agree.
func TestMutexOfferMatchesThePrelude(t *testing.T) {
	want := fmt.Sprintf("local LG_OFFER_MS = %d\n", MutexOffer.Milliseconds())
	if !strings.Contains(Prelude(), want) {
		t.Errorf("prelude.lua does not define %q", strings.TrimSpace(want))
	}
}
