package peers

import (
	"context"
	"sync"
	"time"
)

// manualRenewal is what a user of a library without a watchdog writes: one
// goroutine per held lock that extends the lease every lease/3 until the
// lock is released. It exists so that the "10,000 locks held" workload
// compares what each library costs when locks must outlive their lease.
type manualRenewal struct {
	stop chan struct{}
	done sync.WaitGroup
}

func startManualRenewal(lease time.Duration, extend func(ctx context.Context) error) *manualRenewal {
	r := &manualRenewal{stop: make(chan struct{})}
	r.done.Add(1)
	go func() {
		defer r.done.Done()
		t := time.NewTicker(lease / 3)
		defer t.Stop()
		for {
			select {
			case <-r.stop:
				return
			case <-t.C:
				ctx, cancel := context.WithTimeout(context.Background(), lease/3)
				err := extend(ctx)
				cancel()
				if err != nil {
					// The lock is gone; a real caller would abort its work.
					return
				}
			}
		}
	}()
	return r
}

// Stop ends the renewals and waits for the goroutine; nil-safe.
func (r *manualRenewal) Stop() {
	if r == nil {
		return
	}
	close(r.stop)
	r.done.Wait()
}
