package luashim

import (
	"sync"
	"time"
)

// Clock is where the shim reads the time: TIME, TTLs and key expiry all use
// it, so a test that drives a VirtualClock controls every deadline a script
// sees.
type Clock interface {
	Now() time.Time
}

// RealClock reads the machine's wall clock. The embedded backend uses it.
type RealClock struct{}

// Now returns time.Now().
func (RealClock) Now() time.Time { return time.Now() }

// VirtualClock is a clock that moves only when told to. It is safe for
// concurrent use, so a test may advance it while other goroutines run
// scripts.
type VirtualClock struct {
	mu  sync.Mutex
	now time.Time
}

// NewVirtualClock returns a clock stopped at start.
func NewVirtualClock(start time.Time) *VirtualClock {
	return &VirtualClock{now: start}
}

// Now returns the clock's current time.
func (c *VirtualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d (backward if d is negative).
func (c *VirtualClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// Set moves the clock to t.
func (c *VirtualClock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}
