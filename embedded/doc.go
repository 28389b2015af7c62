// Package embedded runs lockgen locks without a Redis server: the same Lua
// scripts as in Redis, executed in process by the gopher-lua Redis shim
// (package luashim) on the real clock. Use it for demos and for unit tests
// of code that takes locks:
//
//	l := embedded.New()
//	defer l.Close()
//	svc := orders.NewOrderServiceLocked(&orders.OrderService{}, l)
//
// Locks taken through one embedded Locker exclude each other across
// goroutines exactly as they would across processes on Redis. To make
// several Lockers share one keyspace (to play several processes in a test),
// build them on one Backend with runtime.NewWithBackend.
//
// The embedded server has no replicas: with runtime.WithReplicas every
// Acquire fails with runtime.ErrNotReplicated.
package embedded
