package runtime_test

import (
	"context"
	"errors"
	"net"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/lockgen/lockgen/redistest"
	"github.com/lockgen/lockgen/runtime"
	"github.com/redis/go-redis/v9"
)

// A server that restarts empty (no persistence) has lost every lock. The
// holder of one with a long lease hears of it when its Locker reconnects
// to a server with another run_id, not at its next renewal (lease/3 = 30 s
// after its acquire).
//
// How soon is not a fixed figure: go-redis dials again within about a second
// of the restart (its probe of a refusing server runs once a second), and
// the run_id check after that dial is retried while it fails, 50 ms to 1.6 s
// apart (serverCheckPauses: about 3 s of tries in all). Alone it takes a few
// ms; on a loaded machine the chain can pass 5 s, which failed this test
// once when that was its bound. restartNoticedWithin gives it that whole
// chain with room for the scheduler, and stays half of the renewal's 30 s,
// so a restart noticed only at the renewal still fails the test.
func TestRestartedServerCancelsHolders(t *testing.T) {
	s := redistest.Start(t)
	prefix := uniquePrefix(t)
	const lease = 90 * time.Second
	newLocker := func() *runtime.Locker {
		rdb := redis.NewClient(s.Options())
		l := runtime.New(rdb, runtime.WithKeyPrefix(prefix), runtime.WithDefaultLease(lease))
		t.Cleanup(func() { l.Close(); rdb.Close() })
		return l
	}
	first, second := newLocker(), newLocker()
	ctx := ctxTimeout(t, 60*time.Second)
	lock := runtime.Lock{Kind: runtime.Mutex, Key: "k", Wait: runtime.NoWait}
	h, err := first.Acquire(ctx, lock)
	if err != nil {
		t.Fatal(err)
	}
	// The Locker learns the server's run_id (INFO) after its first dial.
	waitForCommand(t, s, "info")

	s.Kill()
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	h2, err := second.Acquire(ctx, lock)
	if err != nil {
		t.Fatalf("the restarted server has no lock, yet: %v", err)
	}
	granted := time.Now()
	defer h2.Release()
	select {
	case <-h.Context().Done():
		cancelled := time.Now()
		if cause := context.Cause(h.Context()); !errors.Is(cause, runtime.ErrLockLost) {
			t.Errorf("cancelled with %v, want ErrLockLost", cause)
		}
		t.Logf("first holder cancelled %v after the restart; overlap with the second holder %v",
			cancelled.Sub(restarted).Round(time.Millisecond), max(cancelled.Sub(granted), 0).Round(time.Millisecond))
	case <-time.After(restartNoticedWithin):
		t.Fatalf("the first holder was not told within %v of the restart that its lock is gone", restartNoticedWithin)
	}
}

// restartNoticedWithin bounds how long after a restart a holder may learn
// that its lock is gone: go-redis's redial (about 1 s), the run_id check's
// retries (about 3 s), three times over for a busy machine.
const restartNoticedWithin = 15 * time.Second

// waitForCommand waits until a client of s has run cmd, by the server's
// command statistics: CLIENT LIST shows only each client's last command,
// and a client that ran INFO and then PING was missed there under load.
// The poll's own INFO commandstats calls are counted out.
func waitForCommand(t *testing.T, s *redistest.Server, cmd string) {
	t.Helper()
	c := redis.NewClient(s.Options())
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for own := 0; time.Now().Before(deadline); own++ {
		stats, err := c.Info(context.Background(), "commandstats").Result()
		if err == nil && commandCalls(stats, cmd)-callsByPoll(cmd, own) > 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no client ran %s within 10s", cmd)
}

// commandCalls reads cmd's calls from an INFO commandstats reply.
func commandCalls(stats, cmd string) int {
	_, rest, ok := strings.Cut(stats, "cmdstat_"+cmd+":calls=")
	if !ok {
		return 0
	}
	n, _ := strconv.Atoi(rest[:strings.IndexAny(rest+",", ",\r\n")])
	return n
}

// callsByPoll is how many of cmd's calls the poll made before its call
// number own: its INFO calls, counted once they ran.
func callsByPoll(cmd string, own int) int {
	if cmd == "info" {
		return own
	}
	return 0
}

// The check after a dial can fail: go-redis fails calls at once while its
// own probe of a server that refused dials has not yet reopened the pool,
// and that probe's dial is the one that started the check. A check whose
// INFO failed must try again, or the restart goes unnoticed until the
// holder's next renewal (lease/3 = 30 s on). Here the first INFOs after
// the restart fail as they do then.
func TestRestartNoticedWhenTheFirstChecksFail(t *testing.T) {
	s, h, failing := holdWithFailingInfos(t, 0)
	waitForCommand(t, s, "info")

	failing.left.Store(3)
	s.Kill()
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-h.Context().Done():
		if cause := context.Cause(h.Context()); !errors.Is(cause, runtime.ErrLockLost) {
			t.Errorf("cancelled with %v, want ErrLockLost", cause)
		}
		if n := failing.left.Load(); n > 0 {
			t.Errorf("told with %d INFO failures left: the test did not make the check fail", n)
		}
	case <-time.After(restartNoticedWithin):
		t.Fatalf("the holder was not told within %v of the restart that its lock is gone (INFO failures left: %d)",
			restartNoticedWithin, failing.left.Load())
	}
}

// A check that never reads the run_id after a restart (every INFO fails
// while it tries) cannot tell whether the server is the one it knew: it
// must verify the held locks rather than wait for their renewals.
func TestRestartNoticedWhenEveryCheckFails(t *testing.T) {
	t.Parallel()
	s, h, failing := holdWithFailingInfos(t, 0)
	waitForCommand(t, s, "info")

	failing.left.Store(1 << 40)
	s.Kill()
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	awaitLost(t, h, failing)

	// Not knowing is no change of server: the Pub/Sub connection stays,
	// so no redial starts another check. (Were it dropped, a server whose
	// INFO keeps failing, one LOADING its data say, would have its
	// connection dropped and every lock verified every few seconds, for
	// ever.) The checks under way when the holder was told end (a check
	// fails 7 INFOs in about 3 s, slower on a loaded machine), and then no
	// INFO fails for longer than the longest pause of a check (1.6 s): a
	// loop would never fall quiet.
	quietAfter(t, failing, 2500*time.Millisecond, 30*time.Second)
	after := failing.failed.Load()
	time.Sleep(4 * time.Second)
	if n := failing.failed.Load() - after; n >= 7 {
		t.Errorf("%d more INFOs failed in 4 s once the checks had fallen quiet: a check that could not tell started another", n)
	}
}

// quietAfter waits until no INFO has failed for quiet, failing the test if
// that has not happened within limit.
func quietAfter(t *testing.T, failing *failInfos, quiet, limit time.Duration) {
	t.Helper()
	last, changed := failing.failed.Load(), time.Now()
	for start := time.Now(); time.Since(changed) < quiet; time.Sleep(20 * time.Millisecond) {
		if time.Since(start) > limit {
			t.Fatalf("INFOs kept failing for %v after the holder was told (%d in all): a check that could not tell starts another", limit, failing.failed.Load())
		}
		if n := failing.failed.Load(); n != last {
			last, changed = n, time.Now()
		}
	}
}

// The run_id a restart is compared with may never have been read: the
// Locker's first checks failed (here every INFO until the restart, as when
// the server was killed while the first check was under way). The first
// run_id read then cannot tell the restart apart from the server before.
func TestRestartNoticedWhenTheRunIDWasNeverRead(t *testing.T) {
	t.Parallel()
	s, h, failing := holdWithFailingInfos(t, 1<<40)
	// The first check gives up after its first try and one per pause.
	deadline := time.Now().Add(30 * time.Second)
	for failing.failed.Load() < 7 {
		if time.Now().After(deadline) {
			t.Fatalf("the first check made %d INFOs in 30s, want 7", failing.failed.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if h.Context().Err() != nil {
		t.Fatalf("the held lock was lost before the restart: %v", context.Cause(h.Context()))
	}

	failing.left.Store(0)
	s.Kill()
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	awaitLost(t, h, nil)
}

// holdWithFailingInfos starts a server and a Locker whose client fails its
// next failFirst INFO commands (failInfos), and holds a mutex there with a
// 90 s lease: no renewal (30 s on) can tell the holder of a loss during
// the test, only the run_id check can.
func holdWithFailingInfos(t *testing.T, failFirst int64) (*redistest.Server, *runtime.Held, *failInfos) {
	t.Helper()
	s := redistest.Start(t)
	rdb := redis.NewClient(s.Options())
	failing := &failInfos{}
	failing.left.Store(failFirst)
	rdb.AddHook(failing)
	l := runtime.New(rdb, runtime.WithKeyPrefix(uniquePrefix(t)), runtime.WithDefaultLease(90*time.Second))
	t.Cleanup(func() { l.Close(); rdb.Close() })
	h, err := l.Acquire(ctxTimeout(t, 60*time.Second), runtime.Lock{Kind: runtime.Mutex, Key: "k", Wait: runtime.NoWait})
	if err != nil {
		t.Fatal(err)
	}
	return s, h, failing
}

// awaitLost waits for h's context to end with ErrLockLost within
// restartNoticedWithin; failing, if not nil, must have failed an INFO by
// then, or the test proved nothing.
func awaitLost(t *testing.T, h *runtime.Held, failing *failInfos) {
	t.Helper()
	select {
	case <-h.Context().Done():
		if cause := context.Cause(h.Context()); !errors.Is(cause, runtime.ErrLockLost) {
			t.Errorf("cancelled with %v, want ErrLockLost", cause)
		}
		if failing != nil && failing.failed.Load() == 0 {
			t.Errorf("told without a failed INFO: the test did not make the checks fail")
		}
	case <-time.After(restartNoticedWithin):
		t.Fatalf("the holder was not told within %v of the restart that its lock is gone", restartNoticedWithin)
	}
}

// failInfos fails the next left INFO commands with a refused dial, as
// go-redis does while its pool waits for its probe to reach the server;
// failed counts those it failed.
type failInfos struct{ left, failed atomic.Int64 }

func (f *failInfos) DialHook(next redis.DialHook) redis.DialHook { return next }

func (f *failInfos) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() == "info" && f.left.Add(-1) >= 0 {
			f.failed.Add(1)
			cmd.SetErr(&net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)})
			return cmd.Err()
		}
		return next(ctx, cmd)
	}
}

func (f *failInfos) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
