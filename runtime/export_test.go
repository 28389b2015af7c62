package runtime

// MutexWaitersInLine counts the mutex waiters queued in l's process, on
// every lock: tests wait for a waiter to have joined the line, which it
// does without a call to Redis.
func MutexWaitersInLine(l *Locker) int {
	l.wakeups.mu.Lock()
	defer l.wakeups.mu.Unlock()
	n := 0
	for _, wc := range l.wakeups.channels {
		for _, w := range wc.waiters {
			if w.inLine {
				n++
			}
		}
	}
	return n
}
