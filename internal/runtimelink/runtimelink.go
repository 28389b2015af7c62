// Package runtimelink lets lockgen's own packages that build on package
// runtime (the quorum) learn what a Locker keeps unexported, without adding
// to runtime's public API. Package runtime fills the variables in when it
// is initialised; runtime cannot import those packages, and they cannot
// read its fields.
package runtimelink

// QuorumRefusal returns the error of an option a quorum Locker refuses
// (WithReplicas: the majority of independent servers is its replication),
// or nil. locker is a *runtime.Locker.
var QuorumRefusal func(locker any) error
