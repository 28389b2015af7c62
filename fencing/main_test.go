package fencing_test

import (
	"os"
	"testing"

	"github.com/lockgen/lockgen/redistest"
)

// TestMain silences go-redis's pool logging: the tests stop and cut off
// their servers on purpose, and its dial-failure lines would bury the output.
func TestMain(m *testing.M) {
	redistest.QuietGoRedisLogs()
	os.Exit(m.Run())
}
