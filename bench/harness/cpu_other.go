//go:build !unix

package harness

import "time"

// processCPU is not measured off Unix: client CPU per cycle reads 0.
func processCPU() time.Duration { return 0 }
