package main

import "testing"

// TestImperativeRuns runs the hand-written example on the embedded backend;
// it returns an error if any acquire or release it expects to succeed fails.
func TestImperativeRuns(t *testing.T) {
	if err := run(""); err != nil {
		t.Fatal(err)
	}
}
