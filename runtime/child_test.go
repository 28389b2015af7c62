package runtime_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lockgen/lockgen/redistest"
	"github.com/lockgen/lockgen/runtime"
	"github.com/redis/go-redis/v9"
)

// Tests that need several OS processes re-execute the test binary with
// childEnv set to a mode; TestMain sends such a process to childMain
// instead of running tests. The child's settings come in further LOCKGEN_*
// variables.
const childEnv = "LOCKGEN_RUNTIME_CHILD"

func childMain() int {
	rdb := redis.NewClient(&redis.Options{Addr: os.Getenv("LOCKGEN_ADDR")})
	defer rdb.Close()
	l := runtime.New(rdb, runtime.WithKeyPrefix(os.Getenv("LOCKGEN_PREFIX")))
	defer l.Close()
	return redistest.RunChild(os.Getenv(childEnv), map[string]func() error{
		"counter": func() error { return childCounter(l, rdb) },
		"hold":    func() error { return childHold(l) },
	})
}

// childCounter increments a Redis counter with a non-atomic GET and SET
// under a mutex, from several goroutines.
func childCounter(l *runtime.Locker, rdb *redis.Client) error {
	goroutines, _ := strconv.Atoi(os.Getenv("LOCKGEN_GOROUTINES"))
	rounds, _ := strconv.Atoi(os.Getenv("LOCKGEN_ROUNDS"))
	counter := os.Getenv("LOCKGEN_PREFIX") + "counter"
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	errs := make(chan error, goroutines)
	var wg sync.WaitGroup
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				err := func() (err error) {
					h, err := l.Acquire(ctx, runtime.Lock{Kind: runtime.Mutex, Key: "counter", Lease: 2 * time.Second})
					if err != nil {
						return err
					}
					defer h.ReleaseInto(&err)
					n, err := rdb.Get(h.Context(), counter).Int()
					if err != nil && err != redis.Nil {
						return err
					}
					return rdb.Set(h.Context(), counter, n+1, 0).Err()
				}()
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// childHold takes a lock, says so on stdout, and waits to be killed.
func childHold(l *runtime.Locker) error {
	lease, _ := time.ParseDuration(os.Getenv("LOCKGEN_LEASE"))
	_, err := l.Acquire(context.Background(), runtime.Lock{Kind: runtime.Mutex, Key: "crash", Lease: lease})
	if err != nil {
		return err
	}
	fmt.Println("held")
	time.Sleep(time.Minute)
	return fmt.Errorf("not killed within a minute")
}

func startChild(t *testing.T, mode, prefix string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+mode, "LOCKGEN_ADDR="+redisServer(t).Addr, "LOCKGEN_PREFIX="+prefix)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = os.Stderr
	return cmd
}

// Processes x goroutines doing read-modify-write under one mutex: not one
// update may be lost.
func TestMutualExclusionAcrossProcesses(t *testing.T) {
	const procs, goroutines, rounds = 3, 4, 25
	prefix := uniquePrefix(t)
	var cmds []*exec.Cmd
	for range procs {
		cmd := startChild(t, "counter", prefix,
			"LOCKGEN_GOROUTINES="+strconv.Itoa(goroutines), "LOCKGEN_ROUNDS="+strconv.Itoa(rounds))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("child: %v", err)
		}
	}
	got, err := redisClient(t).Get(context.Background(), prefix+"counter").Int()
	if err != nil {
		t.Fatal(err)
	}
	if want := procs * goroutines * rounds; got != want {
		t.Fatalf("counter = %d, want %d: %d updates lost", got, want, want-got)
	}
}

// A holder that dies (SIGKILL, no release) frees its lock within its lease.
func TestKilledHolderFreesLockWithinLease(t *testing.T) {
	const lease = 500 * time.Millisecond
	prefix := uniquePrefix(t)
	cmd := startChild(t, "hold", prefix, "LOCKGEN_LEASE="+lease.String())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(out)
		s.Scan()
		line <- s.Text()
	}()
	select {
	case l := <-line:
		if l != "held" {
			t.Fatalf("child said %q", l)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("child did not take the lock within 10s")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	cmd.Wait()

	// Nothing is published when a lease runs out: the waiter sees the lock
	// free at its next attempt, which a short waiter window makes come
	// every 10ms (window/3), so that what is measured is the lease.
	l := runtime.New(redisClient(t), runtime.WithKeyPrefix(prefix), runtime.WithWaiterWindow(30*time.Millisecond))
	defer l.Close()
	h, err := l.Acquire(ctxTimeout(t, 5*time.Second), runtime.Lock{Kind: runtime.Mutex, Key: "crash", Wait: 2 * lease})
	if err != nil {
		t.Fatalf("lock of the killed holder: %v", err)
	}
	took := time.Since(killed)
	h.Release()
	t.Logf("free %v after the kill (lease %v)", took, lease)
	if took > lease+150*time.Millisecond {
		t.Errorf("free after %v, want within the lease %v", took, lease)
	}
}
