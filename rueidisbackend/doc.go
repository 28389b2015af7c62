// Package rueidisbackend runs lockgen's runtime on a rueidis client
// (github.com/redis/rueidis) instead of go-redis.
//
// rueidis pipelines the commands of concurrent goroutines over a few shared
// connections on its own: when many goroutines lock many different keys, their
// script calls share round trips and system calls, which is where a
// connection-per-request pool spends its CPU. When only one goroutine is
// calling, a command is written at once, so an idle client pays no batching
// delay. On top of that the Locker sends script calls that queue behind a
// few under way as one DoMulti (the coalescer a Locker puts in front of a
// backend that states Caps.HonorsDeadline, as this one does): rueidis writes
// about one command per system call when goroutines do not queue faster
// than its writer. Wake-up subscriptions ride on the same connections
// (RESP3).
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
//
// Wake-ups: each channel a Locker waits on is one Receive of rueidis on the
// node's shared connection. After a lost connection rueidis subscribes
// again by itself and the waiters are woken ("all"), since messages may
// have been lost; a subscription the server ends (a Cluster slot that
// moved) reaches the Locker as backend.PayloadUnsubscribed, and it
// subscribes again on the slot's new owner. Give each Locker's waiters
// their own channels: two Lockers on one rueidis client that wait on the
// same key share the connection's subscription, and when one of them
// unsubscribes, the other's waiters are woken and subscribe again (correct,
// but a wasted round trip).
//
// EvalWait (runtime.WithReplicas) runs the script and WAIT on a dedicated
// connection, since WAIT blocks the connection it runs on.
//
// A restart or a failover is noticed at once on a single server or behind
// Sentinel (backend.Caps.WatchMasters): the backend keeps a channel of its own
// subscribed, the Locker's prefix + "watch", and when rueidis has
// subscribed it again on a new connection the Locker verifies every lock
// it holds; a lock the server no longer has is lost a round trip later
// (in the tests: 0-7 ms after a restart, where it took 9.98 s, the next
// renewal at the default 30 s lease, without the watch; 249 ms after the
// sentinels named a new master that lacked the lock). On a Cluster it
// does not watch yet, unlike the go-redis backend, which follows the slot
// map: a lock lost there in a failover is found at its next renewal, up to
// a third of the lease later, so fence what you protect (runtime.Fence).
// runtime.WithRestartGuard needs go-redis.
package rueidisbackend
