// Package faults is lockgen's fault suite: it runs the runtime against real
// redis-server processes while it breaks things on purpose, and checks
// what a user relies on. It is tests only, and `make test` runs it with
// the rest.
//
// The faults: a loopback proxy between a client and the server that
// blackholes, delays (evenly, or each chunk by an amount of its own), or
// cuts a connection right after a request reached the server
// (redistest.Proxy); SIGKILL, SIGSTOP and SIGCONT of holder and
// waiter processes (the test binary run again as a child, see child_test.go);
// redis-server killed and restarted on its port; CLIENT PAUSE WRITE; DEBUG
// SLEEP; go-redis with short read timeouts, with and without retries.
//
// The invariants, each checked by several cases:
//
//	(a) once Acquire has returned an error, nothing of that call is left in
//	    Redis after the runtime's bounded clean-up;
//	(b) Release returning nil means the lock is gone;
//	(c) a waiter that returned is in no queue;
//	(d) a wait bound holds even when Redis does not answer;
//	(e) a timed-out acquire leaves no key behind;
//	(f) a go-redis retry after a dropped connection leaves no hold;
//	(g) a killed waiter does not make the next one wait a lease;
//	(h) mutual exclusion, with fencing, and strictly increasing fences;
//	(i) a holder cut off from Redis is told before anyone else gets the lock;
//	(j) a failed WAIT (replica safety) leaves no hold.
//
// "Nothing left" is checked generically: every key under the case's
// prefix is scanned (SCAN, never KEYS) for a string value, hash field or
// value, or set, list or zset member that contains the holder id (see
// trace_test.go). docs/reliability.md lists the cases and the figures they
// print with `go test -v ./faults/`.
package faults

import (
	"flag"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/lockgen/lockgen/redistest"
)

// TestMain sends a re-executed test binary to its child role instead of
// running tests (child_test.go).
//
// The cases spend their time waiting for leases, sleeps and pauses to run
// out, each on a server of its own, so they run in parallel beyond the
// default of one per CPU: on a 2-core machine that default would make the
// suite three times longer. An explicit -test.parallel wins.
func TestMain(m *testing.M) {
	redistest.QuietGoRedisLogs() // its dial-failure lines would bury the output
	if role := os.Getenv(childRoleEnv); role != "" {
		os.Exit(childMain(role))
	}
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		flag.Set("test.parallel", strconv.Itoa(casesInParallel))
	}
	os.Exit(m.Run())
}

// casesInParallel is the default -test.parallel of the suite.
const casesInParallel = 8

// Bounds shared by the cases.
const (
	// cleanupBound is how long the runtime may take to give back what a
	// failed or abandoned attempt may have left (waitCleanedUp).
	cleanupBound = 5 * time.Second

	// waitSlack is how much a wait=1s caller may overrun its bound on a
	// busy machine: it must return within 1.5 s.
	waitSlack = 500 * time.Millisecond
)
