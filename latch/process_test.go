package latch_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockgen/lockgen/latch"
	"github.com/lockgen/lockgen/runtime"
)

// The latch every process of TestLatchAcrossProcesses uses.
const processLatch = "migration"

// childLatchAwait awaits the latch from LOCKGEN_AWAITERS goroutines and
// prints "released <unix ns>" for each as it returns.
func childLatchAwait(l *runtime.Locker) error {
	n, _ := strconv.Atoi(os.Getenv("LOCKGEN_AWAITERS"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var mu sync.Mutex
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := latch.New(l, processLatch).Await(ctx); err != nil {
				errs <- err
				return
			}
			at := time.Now().UnixNano()
			mu.Lock()
			fmt.Printf("released %d\n", at)
			mu.Unlock()
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// childLatchCount counts the latch down as party LOCKGEN_PARTY for each
// line "go" on stdin, twice (the second is a retry, which must not count),
// and prints "counted <unix ns when sent> <left> <left after the retry>".
func childLatchCount(l *runtime.Locker) error {
	party := os.Getenv("LOCKGEN_PARTY")
	lt := latch.New(l, processLatch)
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		sent := time.Now().UnixNano()
		left, err := lt.CountDownAs(ctx, party)
		if err != nil {
			cancel()
			return err
		}
		again, err := lt.CountDownAs(ctx, party)
		cancel()
		if err != nil {
			return err
		}
		fmt.Printf("counted %d %d %d\n", sent, left, again)
	}
	return in.Err()
}

// lines sends each line r prints to the channel it returns.
func lines(r io.Reader) <-chan string {
	out := make(chan string, 64)
	go func() {
		s := bufio.NewScanner(r)
		for s.Scan() {
			out <- s.Text()
		}
		close(out)
	}()
	return out
}

// Three processes count a latch down; awaiters in two other processes are
// all released, by the one wake message, soon after the last count-down
// was sent, and none before it.
func TestLatchAcrossProcesses(t *testing.T) {
	const counters, awaitProcs, perProc = 3, 2, 4
	prefix := uniquePrefix(t)
	rdb := redisClient(t)
	l := runtime.New(rdb, runtime.WithKeyPrefix(prefix))
	defer l.Close()
	ctx := ctxTimeout(t, 60*time.Second)
	if ok, err := latch.New(l, processLatch).TrySetCount(ctx, counters); !ok || err != nil {
		t.Fatalf("TrySetCount: %v, %v", ok, err)
	}

	var released []<-chan string
	var cmds []*exec.Cmd
	t.Cleanup(func() {
		for _, c := range cmds {
			c.Process.Kill()
			c.Wait()
		}
	})
	for range awaitProcs {
		cmd := startChild(t, "latch-await", prefix, "LOCKGEN_AWAITERS="+strconv.Itoa(perProc))
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
		released = append(released, lines(out))
	}
	type counter struct {
		in  io.WriteCloser
		out <-chan string
	}
	var parties []counter
	for i := range counters {
		cmd := startChild(t, "latch-count", prefix, "LOCKGEN_PARTY=shard-"+strconv.Itoa(i))
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
		parties = append(parties, counter{in, lines(out)})
	}
	do := func(_ testing.TB, args ...string) (any, error) {
		a := make([]any, len(args))
		for i, s := range args {
			a[i] = s
		}
		return rdb.Do(context.Background(), a...).Result()
	}
	waitSubscribers(t, do, prefix+"latch:{"+processLatch+"}:wake", awaitProcs)

	var lastSent time.Time
	for i, p := range parties {
		if _, err := io.WriteString(p.in, "go\n"); err != nil {
			t.Fatal(err)
		}
		line := <-p.out
		var sent, left, again int64
		if _, err := fmt.Sscanf(line, "counted %d %d %d", &sent, &left, &again); err != nil {
			t.Fatalf("counter %d said %q", i, line)
		}
		if want := int64(counters - 1 - i); left != want || again != want {
			t.Fatalf("counter %d: left %d, after its retry %d; want %d both", i, left, again, want)
		}
		lastSent = time.Unix(0, sent)
		p.in.Close()
	}

	var last time.Duration
	n := 0
	timeout := time.After(30 * time.Second)
	for _, ch := range released {
		for range perProc {
			var line string
			select {
			case line = <-ch:
			case <-timeout:
				t.Fatalf("%d of %d awaiters released after 30s", n, awaitProcs*perProc)
			}
			ns, err := strconv.ParseInt(strings.TrimPrefix(line, "released "), 10, 64)
			if err != nil {
				t.Fatalf("awaiter said %q", line)
			}
			d := time.Unix(0, ns).Sub(lastSent)
			if d < 0 {
				t.Errorf("an awaiter was released %v before the last count-down was sent", -d)
			}
			last = max(last, d)
			n++
		}
	}
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Errorf("child: %v", err)
		}
	}
	cmds = nil
	t.Logf("%d awaiters in %d processes released; the last %v after the last of %d count-downs was sent",
		n, awaitProcs, last, counters)
	if last > 2*time.Second {
		t.Errorf("the last awaiter was released %v after the last count-down; want within 2s", last)
	}
}
