// Package onbusyskip: onbusy=skip without wait= tries once (runtime.NoWait),
// since waiting until ctx is done could never skip; with wait= it skips when
// that wait runs out.
package onbusyskip

import "context"

type Jobs struct{}

//lock:mutex key=job:nightly onbusy=skip
func (j *Jobs) Nightly(ctx context.Context) error { return nil }

//lock:mutex key=job:hourly onbusy=skip wait=2s
func (j *Jobs) Hourly(ctx context.Context) error { return nil }

//lock:semaphore key=job:export permits=2 onbusy=skip
//lock:read key=job:config onbusy=skip
func (j *Jobs) Export(ctx context.Context) (int, error) { return 0, nil }
