package redistest

import (
	"os"
	"testing"
)

// TestMain silences go-redis's pool logging: the tests stop and cut off
// their servers on purpose, and its dial-failure lines would bury the output.
// A child that reserveFromAnotherProcess starts only tries its
// reservation (reserveChild).
func TestMain(m *testing.M) {
	if v := os.Getenv(reserveChildEnv); v != "" {
		os.Exit(reserveChild(v))
	}
	QuietGoRedisLogs()
	os.Exit(m.Run())
}
