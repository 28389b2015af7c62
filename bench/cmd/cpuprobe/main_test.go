package main

import "testing"

// A commandstats line names usec and usec_per_call: each must be read as
// itself, not as the other that shares its prefix.
func TestFieldReadsTheNamedFieldOfACommandstatsLine(t *testing.T) {
	line := "calls=12,usec=40,usec_per_call=3.33,rejected_calls=0,failed_calls=1"
	for name, want := range map[string]float64{"calls": 12, "usec": 40, "usec_per_call": 3.33, "failed_calls": 1, "absent": 0} {
		if got := field(line, name); got != want {
			t.Errorf("field(%q) = %v, want %v", name, got, want)
		}
	}
}
