package locktest

import (
	"sync"
	"time"
)

// serverClock is the embedded server's clock: the machine's clock plus
// whatever Advance added. It keeps running, so that everything that counts
// on time passing (fences, tombstones, waiter registrations) behaves as on
// a real server, and it jumps when a test says so.
type serverClock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *serverClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

// advance moves the clock forward by d; a negative d is ignored, since a
// server clock going back would break fences.
func (c *serverClock) advance(d time.Duration) {
	c.mu.Lock()
	c.offset += max(d, 0)
	c.mu.Unlock()
}
