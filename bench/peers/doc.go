// Package peers puts lockgen and the Redis lock libraries a Go developer
// would pick instead behind one small interface, so that the benchmark
// harness can drive them all the same way.
//
// Each library appears in named configurations (a Peer): its documented
// defaults, and the settings a user reading its documentation would choose
// for low latency. Notes on every Peer say exactly which options are set, so
// the report can print them next to the numbers.
//
//	for _, p := range peers.All() {
//		c, err := p.Open(peers.Config{Addr: addr})
//		...
//		h, err := c.Lock(ctx, "hot")
//		...
//		h.Unlock(ctx)
//		c.Close()
//	}
//
// Pipelining lists further configurations, measured only where many
// goroutines lock many keys: lockgen on the rueidis backend (module
// rueidisbackend) and on go-redis's AutoPipeline, and redislock on
// AutoPipeline.
//
// Every Client counts what it sends (Counts): calls, where a pipeline counts
// once (a round trip as the caller sees it, before any automatic pipelining
// inside the driver), and commands, where a pipeline counts each command.
// Pub/Sub commands bypass the drivers' hooks; the harness counts them on the
// server.
package peers
