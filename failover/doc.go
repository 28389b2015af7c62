// Package failover holds lockgen's failover tests: every kind of lock held
// and waited on through a real Sentinel deployment (redistest.StartSentinel:
// a master, two replicas and three sentinels on loopback, reached with
// redis.NewFailoverClient) while the master is failed over gracefully
// (SENTINEL FAILOVER) or killed (SIGKILL), with and without a replication
// cut just before; and the measurements of what WithReplicas and the
// server settings min-replicas-to-write / min-replicas-max-lag protect
// against, which docs/failover.md publishes. The package has no code of its
// own: only tests, which `make test` runs.
package failover
