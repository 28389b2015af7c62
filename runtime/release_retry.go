package runtime

import (
	"context"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/internal/callerr"
)

// evalRelease runs a release call, and runs it again while it fails before
// reaching Redis (a dial that failed: the call was never sent, so nothing
// can have run twice), within the release timeout. Right after a server
// comes back, a client that met many refused dials may refuse new ones for
// a while (go-redis waits for its own probe, up to a second) even though a
// grant already came through; the release then waits for it rather than
// leave the lock to the background clean-up. Any other error, or a sent
// call without a reply, is the caller's to handle (the release is then in
// doubt, and a second run could not tell "released" from "not held").
func (l *Locker) evalRelease(ctx context.Context, giveUp time.Time, c backend.Call) (any, error) {
	pause := transientBackoffMin
	for {
		reply, err := l.backend.Eval(ctx, c)
		if !callerr.NotSent(err) || time.Now().Add(pause).After(giveUp) {
			return reply, err
		}
		t := time.NewTimer(pause)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return reply, err
		}
		pause = min(2*pause, transientBackoffMax)
	}
}
