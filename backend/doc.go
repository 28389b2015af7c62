// Package backend is the contract between a lockgen Locker (package
// runtime) and the client that carries its script calls to Redis: the
// Backend interface, the Call it runs and the Reply of a batch, and the
// Caps a Backend states about itself.
//
// It is a leaf: it imports only package lua (the scripts), so that the
// runtime and every Backend (the go-redis one in package runtime, package
// embedded, rueidisbackend, quorum) can import it without importing each
// other. A Backend keeps the guarantees written on its methods: every
// method safe for concurrent use and bounded by its context, Subscribe
// confirmed before it returns, Close leaving the caller's client open.
package backend
