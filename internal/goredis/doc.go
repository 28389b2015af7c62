// Package goredis is lockgen's go-redis transport: the Backend (package
// backend) over a go-redis v9 client that goredisbackend.New and
// runtime.New return. It imports backend, callqueue and callerr, never
// runtime, so that runtime can call into it.
//
// What it guarantees is written on goredisbackend.New. runtime reaches it
// through two seams besides the Backend interface: QueueOf, the queue a
// Locker's call may wait in for a shared pipeline (asked only of the
// backend the Locker was given), and NewRestartGuard, the go-redis half of
// runtime.WithRestartGuard (dials counted, INFO uptime read, and Guard,
// the backend that refuses grants until the servers have been up long
// enough).
package goredis
