package main

import (
	"os"
	"strings"
	"testing"

	"github.com/lockgen/lockgen/redistest"
)

// TestMain silences go-redis's pool logging, which would bury the output.
func TestMain(m *testing.M) {
	redistest.QuietGoRedisLogs()
	os.Exit(m.Run())
}

// TestQuorumInProcess runs the example on three in-process servers.
func TestQuorumInProcess(t *testing.T) {
	var out strings.Builder
	if err := run(&out, nil); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	t.Log(out.String())
}

// TestQuorumOnRedisServers runs it on three redis-servers started here.
func TestQuorumOnRedisServers(t *testing.T) {
	var addrs []string
	for range 3 {
		addrs = append(addrs, redistest.Start(t).Addr)
	}
	var out strings.Builder
	if err := run(&out, addrs); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "above alice's: true") {
		t.Errorf("output does not show a rising token:\n%s", out.String())
	}
}
