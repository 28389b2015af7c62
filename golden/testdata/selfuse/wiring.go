package selfuse

import "github.com/lockgen/lockgen/runtime"

// Wire refers to the generated names, so the package only compiles once
// lock_gen.go exists.
func Wire(l *runtime.Locker) *JobsLocked { return NewJobsLocked(&Jobs{}, l) }
