// Package quorum makes a Locker that takes each mutex on N >= 3 independent
// Redis deployments (RedLock) instead of one:
//
//	l, err := quorum.New([]redis.UniversalClient{a, b, c})
//
// The result is an ordinary *runtime.Locker: generated wrappers, Acquire,
// Held, fences and observers work on it unchanged. Only the Mutex kind is
// supported; other kinds fail with runtime.ErrInvalidLock, and so does
// runtime.WithReplicas (the majority of independent servers is the
// quorum's replication).
//
// # What it guarantees
//
// A lock is granted when a majority of the servers granted it within the
// lease, less the time the acquisition took and a drift margin (1% of the
// lease plus 2 ms); what a minority granted is given back at once. So a
// minority of the servers may crash, stall or be cut off without blocking
// any lock or losing one that is held. Renewals go to every server, and a
// majority must confirm each before the holder's local deadline; when that
// can no longer happen the holder's context is cancelled, as on a single
// server. Fencing tokens keep rising from holder to holder even when the
// servers' clocks disagree (by less than the fence floor, 10 s): the
// highest token of a granting majority is written back to that majority as
// a floor, and every later majority shares at least one server with it.
// An acquire that fewer than a majority can answer fails with ErrNoQuorum:
// at once when the servers failed for good (silent after an error), after
// retrying for at most the Locker's unreachable timeout when they failed
// as in a failover (a refused connection). Servers that are only slow
// make a waiter try again instead.
//
// # What it does not
//
// Exclusion rests on the same assumptions as on one server, and a quorum
// does not remove them: the servers' and the clients' clocks must run at
// nearly the same rate (the drift margin covers 1%), and a holder must not
// be paused (GC, a stopped VM) past its lease, or it may act after another
// holder was granted the lock; only a fencing token checked by the
// storage protects against that. A server that restarts without
// persistence forgets the locks it granted: two such restarts out of three
// servers within one lease let a second holder in while the first still
// holds the lock (the first is told at its next renewal, within a third of
// the lease), and can break the rising tokens too. Run the servers with
// appendfsync always, or keep a restarted server out for one lease.
//
// A grant costs a round trip to every server, in parallel, and a second
// one (the fence floor) to the granting servers whose fence was below the
// highest; a release, one to every server.
package quorum
