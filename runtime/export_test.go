package runtime

// MutexWaitersInLine counts the mutex waiters queued in l's process, on
// every lock: tests wait for a waiter to have joined the line, which it
// does without a call to Redis.
func MutexWaitersInLine(l *Locker) int { return l.wakeups.InLine() }
