// Package rueidisbackend runs lockgen's runtime on a rueidis client
// (github.com/redis/rueidis) instead of go-redis.
//
// rueidis pipelines the commands of concurrent goroutines over a few shared
// connections on its own: when many goroutines lock many different keys, their
// script calls share round trips and system calls, which is where a
// connection-per-request pool spends its CPU. When only one goroutine is
// calling, a command is written at once, so an idle client pays no batching
// delay. Wake-up subscriptions ride on the same connections (RESP3).
//
// It lives in a module of its own so that lockgen's core module does not
// depend on rueidis. Use it with any rueidis client: a single node, a
// Sentinel client, or a Cluster (wake channels are then shard channels,
// SSUBSCRIBE/SPUBLISH, routed by rueidis to the slot's owner).
//
//	client, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{"127.0.0.1:6379"}})
//	...
//	locker := rueidisbackend.NewLocker(client)
//	defer locker.Close() // then client.Close(): the client is yours
package rueidisbackend
