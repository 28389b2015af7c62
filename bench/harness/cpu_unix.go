//go:build unix

package harness

import (
	"syscall"
	"time"
)

// processCPU is the CPU time this process has used so far, user + system
// (getrusage), every goroutine and the Go runtime's own work included.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
