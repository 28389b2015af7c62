// Package selfuse uses its own generated wrapper, as most real packages do:
// before the first run (or with lock_gen.go deleted) NewJobsLocked does not
// exist yet, and lockgen must still generate it.
package selfuse

import "context"

type Jobs struct{}

// Run runs the nightly job once in the fleet.
//
//lock:mutex key=job:nightly wait=0 onbusy=skip
func (j *Jobs) Run(ctx context.Context) error { return nil }
