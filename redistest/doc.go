// Package redistest starts throwaway Redis (or Valkey) servers on free loopback
// ports, the way net/http/httptest starts HTTP servers: for tests, examples
// and benchmarks that need a real Redis and must not depend on one being
// already there.
//
//	srv := redistest.Start(t)          // single node, stopped by t.Cleanup
//	rdb := srv.Client(t)
//
//	cl := redistest.StartCluster(t, 3)  // 3 masters, all 16384 slots assigned
//	crdb := cl.Client(t)
//
//	sn := redistest.StartSentinel(t)    // master, 2 replicas, 3 sentinels (quorum 2)
//	frdb := sn.FailoverClient(t)        // redis.NewFailoverClient through the sentinels
//	old, _ := sn.FailoverGraceful(ctx)  // or KillMaster(ctx); CutReplication(ctx) first for a lag
//	next, _ := sn.WaitNewMaster(ctx, old)
//
// The server is redis-server unless LOCKGEN_REDIS_SERVER (ServerEnv) names
// another program of the same family, e.g. valkey-server: its client
// (valkey-cli, for Cluster creation) is found beside it and its sentinels
// are the same program run with --sentinel. `make test` runs the
// real-server suites on both.
//
// A missing server binary is a test failure, never a skip: the message
// says what to install. `make test` installs it where it can.
//
// For fault tests, a Server can be killed and restarted on the same port
// (Kill, Restart; no other Server, in any test process, gets the port in
// between, so nothing else answers at a killed server's address), frozen
// (DebugSleep, with EnableDebugCommand) or made to hold writes
// (PauseWrites), and a Proxy in front of it forwards, delays, blackholes or
// cuts a client's connection as the test switches it:
//
//	srv := redistest.Start(t, redistest.EnableDebugCommand...)
//	p := redistest.StartProxy(t, srv.Addr) // clients dial p.Addr
//	p.SetMode(redistest.Blackhole())
//
// ReserveAddr gives a test a loopback address where dials are refused, and
// stay refused until the test ends: no Server takes its port meanwhile.
//
// Servers keep no data on disk (no RDB, no AOF) and listen on 127.0.0.1
// only. Launch and LaunchCluster are the same without a testing.TB, for
// programs such as benchmark harnesses; their Close must be called.
package redistest
