package faults

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockgen/lockgen/runtime"
)

// A holder process frozen by SIGSTOP cannot renew: another process gets
// the lock once the lease has run out. When the holder is thawed
// (SIGCONT), its context is cancelled with ErrLockLost and its Release
// says the lock was not held any more, instead of nil. SIGKILL ends a
// child for good. This is also the check that the child machinery works.
func TestStoppedHolderLearnsItLostTheLock(t *testing.T) {
	t.Parallel()
	const lease = time.Second
	e := newEnv(t)
	h := startChild(t, e, "locker", e.srv.Addr)
	h.send("acquire a mutex stopped %v 5s", lease)
	held := h.await(10*time.Second, "acquired", "a")
	holder := held.fields[2]

	h.signal(syscall.SIGSTOP)
	stopped := time.Now()
	other := e.locker(e.client(e.srv.Addr, nil), "s")
	o := acquire(ctxFor(t, 10*time.Second), other, runtime.Lock{Kind: runtime.Mutex, Key: "stopped", Lease: 10 * time.Second, Wait: 5 * time.Second})
	if o.err != nil {
		t.Fatalf("acquire while the holder is stopped: %v", o.err)
	}
	granted := time.Since(stopped)
	h.signal(syscall.SIGCONT)
	thawed := time.Now()
	lost := h.await(5*time.Second, "lost", "a")
	toldAfter := parseNS(lost.fields[3]).Sub(thawed)
	t.Logf("stopped holder: lock granted to another %v after SIGSTOP (lease %v); holder told %v after SIGCONT: %s",
		granted.Round(time.Millisecond), lease, toldAfter.Round(time.Microsecond), strings.Join(lost.fields[4:], " "))
	if granted > lease+2*time.Second {
		t.Errorf("the lock of a stopped holder was free %v after SIGSTOP; want within its lease %v (+2s slack)", granted, lease)
	}
	if !strings.Contains(strings.Join(lost.fields, " "), runtime.ErrLockLost.Error()) {
		t.Errorf("holder's context cause %q; want ErrLockLost", lost.fields[4:])
	}

	h.send("release a")
	rel := h.await(5*time.Second, "released", "a")
	if res := strings.Join(rel.fields[5:], " "); res == "ok" || !strings.Contains(res, runtime.ErrNotHeld.Error()) {
		t.Errorf("Release by the thawed holder returned %q; want ErrNotHeld: another process holds the lock", res)
	}
	noTrace(t, e, holder, "a holder whose lock was taken over")
	rerr := o.held.Release()
	if rerr != nil {
		t.Errorf("release by the new holder: %v", rerr)
	}
	checkGone(t, e, o.holder, rerr)

	h.signal(syscall.SIGKILL)
	if code := h.waitExit(10 * time.Second); code != -1 {
		t.Errorf("child exit code %d after SIGKILL; want -1 (killed by a signal)", code)
	}
	if ws, ok := h.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Errorf("child ended with %v; want SIGKILL", h.cmd.ProcessState)
	}
}

// (g) A waiter process killed while it waits (SIGKILL, after its first
// busy reply, so that Redis may have it marked as the next to be served)
// must not cost the next waiter more than a moment once the holder
// releases: process H holds, D waits and is killed, W waits; H releases;
// W's delay from the release to its grant must be well under a second.
func TestKilledWaiterDoesNotDelayTheNext(t *testing.T) {
	t.Parallel()
	const lease = 3 * time.Second
	e := newEnv(t)
	h := startChild(t, e, "locker", e.srv.Addr)
	d := startChild(t, e, "locker", e.srv.Addr)
	w := startChild(t, e, "locker", e.srv.Addr)

	h.send("acquire a mutex killed %v 0s", lease)
	h.await(10*time.Second, "acquired", "a")
	d.send("acquire a mutex killed %v 0s", lease)
	d.await(10*time.Second, "event", "a", "busy")
	w.send("acquire a mutex killed %v 0s", lease)
	w.await(10*time.Second, "event", "a", "busy")
	d.signal(syscall.SIGKILL)
	d.waitExit(10 * time.Second)

	h.send("release a")
	rel := h.await(10*time.Second, "released", "a")
	if res := strings.Join(rel.fields[5:], " "); res != "ok" {
		t.Fatalf("holder's release: %s", res)
	}
	got := w.await(10*time.Second, "acquired", "a")
	delay := parseNS(got.fields[5]).Sub(parseNS(rel.fields[3]))
	t.Logf("(g) killed mutex waiter: next waiter granted %v after the holder's release (lease %v)", delay.Round(time.Millisecond), lease)
	if delay >= time.Second {
		t.Errorf("(g) the next waiter got the lock %v after the release; want well under 1s: the killed waiter held up the queue", delay.Round(time.Millisecond))
	}
}
