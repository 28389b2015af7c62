package redistest

import (
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/logging"
)

// QuietGoRedisLogs turns go-redis's logger off for the whole process.
// Call it from a test package's TestMain, never from library code: the
// logger is a global of go-redis and belongs to the program.
//
// Tests that kill, pause or cut off their servers on purpose make go-redis's
// pool log every failed dial and retry ("failed to dial after 5 attempts"),
// hundreds of lines that bury the test output; the tests assert what those
// failures amount to through the clients' errors instead.
func QuietGoRedisLogs() {
	redis.SetLogger(&logging.VoidLogger{})
}
