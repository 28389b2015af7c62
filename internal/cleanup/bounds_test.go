package cleanup

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/lockgen/lockgen/internal/callerr"
	"github.com/lockgen/lockgen/internal/callqueue"
)

func TestAFailingReleaseGivesUpWhenTheLeaseEnds(t *testing.T) {
	failure := errors.New("LOADING Redis is loading")
	b := &fakeBackend{reply: func(int, context.Context) error { return failure }}
	q := newQueue(t, b, nil)
	const lease = 300 * time.Millisecond
	r, ended := request("h1", lease)
	start := time.Now()
	q.Add(r, callqueue.Returned, true)
	err := waitEnd(t, ended)
	if !errors.Is(err, errGaveUp) || !errors.Is(err, failure) {
		t.Fatalf("ended with %v, want the give-up sentinel and the last failure", err)
	}
	if took := time.Since(start); took < lease {
		t.Fatalf("gave up after %v, before the lease (%v)", took, lease)
	}
	// Backoff doubles from 10ms: within 300ms that is a handful of tries
	// at most (a stalled machine makes fewer), not a loop.
	if _, calls := b.releases(); calls < 1 || calls > 12 {
		t.Fatalf("%d releases within the lease, want a few with backoff", calls)
	}
}

func TestARefusalEndsTheCleanUpAtOnce(t *testing.T) {
	for _, refusal := range []error{errDenied, errors.New("NOAUTH Authentication required.")} {
		b := &fakeBackend{reply: func(int, context.Context) error { return refusal }}
		q := newQueue(t, b, nil)
		r, ended := request("h1", time.Minute)
		q.Add(r, callqueue.Returned, true)
		if err := waitEnd(t, ended); !errors.Is(err, refusal) {
			t.Fatalf("ended with %v, want %v", err, refusal)
		}
		if _, calls := b.releases(); calls != 1 {
			t.Fatalf("%d releases after a refusal (%v), want 1", calls, refusal)
		}
	}
}

func TestAnOutageCostsOneProbePerPause(t *testing.T) {
	const n = 50
	b := &fakeBackend{reply: func(int, context.Context) error { return fmt.Errorf("release: %w", dialErr) }, sent: make(chan int, 1000)}
	q := newQueue(t, b, nil)
	for i := range n {
		r, _ := request(fmt.Sprint("h", i), time.Minute)
		q.Add(r, callqueue.Returned, true)
	}
	<-b.sent // the first batch found Redis unreachable
	for range 4 {
		if size := <-b.sent; size != 1 {
			t.Fatalf("a batch of %d releases while Redis cannot be reached, want 1 probe", size)
		}
	}
}

func TestCloseAbandonsWhatIsLeftWithinItsGrace(t *testing.T) {
	// The backend holds every batch until its context ends (Close cancels it).
	b := &fakeBackend{reply: func(_ int, ctx context.Context) error { <-ctx.Done(); return ctx.Err() }, sent: make(chan int, 10)}
	q := newQueue(t, b, nil)
	r, ended := request("h1", time.Minute)
	q.Add(r, callqueue.Returned, true)
	<-b.sent
	start := time.Now()
	q.Close()
	if took := time.Since(start); took > 5*closeGrace {
		t.Fatalf("Close took %v, want about its grace (%v)", took, closeGrace)
	}
	if err := waitEnd(t, ended); !errors.Is(err, callerr.ErrClosed) {
		t.Fatalf("ended with %v, want ErrClosed", err)
	}
	r2, ended2 := request("h2", time.Minute)
	q.Add(r2, callqueue.Returned, true)
	if err := waitEnd(t, ended2); !errors.Is(err, callerr.ErrClosed) {
		t.Fatalf("a request after Close ended with %v, want ErrClosed", err)
	}
}

func TestAClaimHoldsTheCleanUpBack(t *testing.T) {
	b := &fakeBackend{}
	q := newQueue(t, b, nil)
	r, ended := request("h1", time.Minute)
	q.Claim(r.Key)
	q.Add(r, callqueue.Returned, true)
	time.Sleep(5 * poll)
	if _, calls := b.releases(); calls != 0 {
		t.Fatalf("%d releases while a claim was held", calls)
	}
	q.Unclaim(r.Key)
	if err := waitEnd(t, ended); err != nil {
		t.Fatalf("ended with %v after Unclaim, want nil", err)
	}
}

func TestRefusedOutright(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{errors.New("NOAUTH Authentication required."), true},
		{fmt.Errorf("release: %w", errors.New("WRONGPASS invalid username-password pair")), true},
		{errors.Join(errors.New("x"), errors.New("NOPERM this user has no permissions")), true},
		{errors.New("ERR Error running script: NOPERM inside"), false},
		{errors.New("LOADING"), false},
		{nil, false},
	} {
		if got := RefusedOutright(c.err); got != c.want {
			t.Errorf("RefusedOutright(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
