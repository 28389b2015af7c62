package generator

import (
	"testing"

	"github.com/lockgen/lockgen/internal/annotation"
)

func mustPattern(t *testing.T, line string) keyPattern {
	t.Helper()
	a, errs := annotation.Parse(line)
	if len(errs) > 0 {
		t.Fatalf("%s: %v", line, errs)
	}
	return newKeyPattern(a.Kind, a.Keys[0])
}

func TestMayCollide(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"//lock:mutex key=order:<id>", "//lock:mutex key=order:<req.OrderID>", true},
		{"//lock:mutex key=order:<id>", "//lock:mutex key=order:<id>:audit", false}, // no value holds ':'
		{"//lock:mutex key=order:<id>", "//lock:mutex key=order:x<n>", true},        // "order:x1"
		{"//lock:mutex key=order:<id>", "//lock:mutex key=order:", true},            // an empty value
		{"//lock:mutex key=order:<id>", "//lock:mutex key=orders", false},
		{"//lock:mutex key=order:<id>", "//lock:fair key=order:<id>", false}, // other family, other Redis key
		{"//lock:read key=order:<id>", "//lock:write key=order:<id>", true},  // two sides of one lock
		{"//lock:mutex key=a:<x>:b", "//lock:mutex key=<y>:<z>:b", true},     // "a:1:b"
		{"//lock:mutex key=a:<x>:b", "//lock:mutex key=<y>:c", false},
		{"//lock:mutex key=t:<x>/<y>", "//lock:mutex key=t:<z>", false}, // '/' is never in a value
		{"//lock:mutex key=t:<x>%41", "//lock:mutex key=t:<z>", true},   // '%' is
		{"//lock:mutex key=job:nightly", "//lock:mutex key=job:nightly", true},
		{"//lock:mutex key=job:nightly", "//lock:mutex key=job:weekly", false},
		{"//lock:semaphore key=<a>/<b> permits=2", "//lock:semaphore key=x:<c> permits=2", false},
	}
	for _, tt := range tests {
		a, b := mustPattern(t, tt.a), mustPattern(t, tt.b)
		if got := mayCollide(a, b); got != tt.want {
			t.Errorf("mayCollide(%s, %s) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
		if got := mayCollide(b, a); got != tt.want {
			t.Errorf("mayCollide(%s, %s) = %v, want %v (not symmetric)", tt.b, tt.a, got, tt.want)
		}
	}
}

func TestTakenBefore(t *testing.T) {
	tests := []struct {
		a, b          string
		before, known bool
	}{
		{"//lock:mutex key=bin:<id>", "//lock:mutex key=crate:<id>", true, true},
		{"//lock:mutex key=crate:<id>", "//lock:mutex key=bin:<id>", false, true},
		{"//lock:fair key=z", "//lock:mutex key=a", true, true},                // "fair:{" < "mutex:{"
		{"//lock:write key=a", "//lock:semaphore key=a permits=1", true, true}, // "rw:{" < "sem:{"
		{"//lock:mutex key=ab", "//lock:mutex key=a", true, true},              // "ab}" < "a}"
		{"//lock:mutex key=a:<x>", "//lock:mutex key=a:b", false, false},       // the value decides
		{"//lock:mutex key=<x>:a", "//lock:mutex key=<y>:b", false, false},
		{"//lock:mutex key=a", "//lock:mutex key=a", false, false},
	}
	for _, tt := range tests {
		before, known := takenBefore(mustPattern(t, tt.a), mustPattern(t, tt.b))
		if before != tt.before || known != tt.known {
			t.Errorf("takenBefore(%s, %s) = %v, %v; want %v, %v", tt.a, tt.b, before, known, tt.before, tt.known)
		}
	}
}
