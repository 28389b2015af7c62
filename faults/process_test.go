package faults

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// child is a child process started by a case (child_test.go has its side
// of the conversation). Its stdout lines are kept; await hands each one
// out once. The case may signal it; it is killed, by its pid, when the
// test ends if it is still running.
type child struct {
	t      *testing.T
	tag    string // "c01": its holder ids start with it
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *syncBuffer
	exited chan struct{} // closed when the process has ended and stdout is drained

	notify chan<- struct{} // if not nil, poked (without blocking) at every line

	mu    sync.Mutex
	lines []childLine
	added chan struct{} // closed and replaced at every line
}

type childLine struct {
	fields []string
	seen   time.Time // when the parent read it
	taken  bool
}

var childSeq atomic.Int32

// startChild starts the test binary as a child of role, talking to Redis
// at addr with the env's key prefix.
func startChild(t *testing.T, e *env, role, addr string, extraEnv ...string) *child {
	t.Helper()
	return startChildNotify(t, e, role, addr, nil, extraEnv...)
}

// startChildNotify is startChild with a channel poked at every line the
// child writes, for a case that follows several children at once.
func startChildNotify(t *testing.T, e *env, role, addr string, notify chan<- struct{}, extraEnv ...string) *child {
	t.Helper()
	c := &child{t: t, tag: fmt.Sprintf("c%02d", childSeq.Add(1)), stderr: &syncBuffer{}, exited: make(chan struct{}), added: make(chan struct{}), notify: notify}
	c.cmd = exec.Command(os.Args[0], "-test.run=^$")
	c.cmd.Env = append(os.Environ(), childRoleEnv+"="+role, childAddrEnv+"="+addr, childPrefixEnv+"="+e.prefix, childTagEnv+"="+c.tag)
	c.cmd.Env = append(c.cmd.Env, extraEnv...)
	c.cmd.Stderr = c.stderr
	var err error
	if c.stdin, err = c.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go c.read(stdout)
	t.Cleanup(c.kill)
	return c
}

// read keeps the child's stdout lines, then reaps the process.
func (c *child) read(stdout io.Reader) {
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		c.mu.Lock()
		c.lines = append(c.lines, childLine{fields: strings.Fields(sc.Text()), seen: time.Now()})
		close(c.added)
		c.added = make(chan struct{})
		c.mu.Unlock()
		if c.notify != nil {
			select {
			case c.notify <- struct{}{}:
			default:
			}
		}
	}
	c.cmd.Wait()
	close(c.exited)
}

// send writes one command line to the child.
func (c *child) send(format string, args ...any) {
	c.t.Helper()
	if _, err := fmt.Fprintf(c.stdin, format+"\n", args...); err != nil {
		c.t.Fatalf("child %s: %v", c.tag, err)
	}
}

// mark returns the number of lines received so far, for awaitAfter.
func (c *child) mark() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.lines)
}

// count returns how many lines received so far start with word.
func (c *child) count(word string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, l := range c.lines {
		if len(l.fields) > 0 && l.fields[0] == word {
			n++
		}
	}
	return n
}

// all returns every line received so far that starts with word.
func (c *child) all(word string) [][]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out [][]string
	for _, l := range c.lines {
		if len(l.fields) > 0 && l.fields[0] == word {
			out = append(out, l.fields)
		}
	}
	return out
}

// await returns the first line not handed out yet whose fields start with
// want (the word, then as many fields as given), waiting up to d for it.
func (c *child) await(d time.Duration, want ...string) childLine {
	c.t.Helper()
	l, ok := c.awaitOK(d, want...)
	if !ok {
		c.t.Fatalf("child %s: no line %q within %v; lines: %v; stderr: %s", c.tag, want, d, c.seenLines(), c.stderr.tail())
	}
	return l
}

func (c *child) awaitOK(d time.Duration, want ...string) (childLine, bool) {
	return c.awaitAfterOK(0, d, want...)
}

// awaitAfter is await for lines received after mark.
func (c *child) awaitAfter(mark int, d time.Duration, want ...string) childLine {
	c.t.Helper()
	l, ok := c.awaitAfterOK(mark, d, want...)
	if !ok {
		c.t.Fatalf("child %s: no new line %q within %v; stderr: %s", c.tag, want, d, c.stderr.tail())
	}
	return l
}

func (c *child) awaitAfterOK(mark int, d time.Duration, want ...string) (childLine, bool) {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		for i := mark; i < len(c.lines); i++ {
			l := &c.lines[i]
			if !l.taken && hasPrefix(l.fields, want) {
				l.taken = true
				c.mu.Unlock()
				return *l, true
			}
		}
		added := c.added
		c.mu.Unlock()
		select {
		case <-added:
		case <-c.exited:
			// A last look: the line may have come with the exit.
			select {
			case <-added:
				continue
			default:
			}
			return childLine{}, false
		case <-deadline.C:
			return childLine{}, false
		}
	}
}

func hasPrefix(fields, want []string) bool {
	if len(fields) < len(want) {
		return false
	}
	for i, w := range want {
		if fields[i] != w {
			return false
		}
	}
	return true
}

func (c *child) seenLines() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.lines))
	for _, l := range c.lines {
		out = append(out, strings.Join(l.fields, " "))
	}
	return out
}

// signal sends sig to the child, by its pid.
func (c *child) signal(sig syscall.Signal) {
	c.t.Helper()
	if err := c.cmd.Process.Signal(sig); err != nil {
		c.t.Fatalf("child %s: %v: %v", c.tag, sig, err)
	}
}

// kill ends the child with SIGKILL (a no-op if it has ended) and reaps it.
func (c *child) kill() {
	select {
	case <-c.exited:
		return
	default:
	}
	c.cmd.Process.Signal(syscall.SIGKILL)
	<-c.exited
}

// waitExit waits up to d for the child to end by itself and returns its
// exit code (-1 if a signal ended it).
func (c *child) waitExit(d time.Duration) int {
	c.t.Helper()
	select {
	case <-c.exited:
		return c.cmd.ProcessState.ExitCode()
	case <-time.After(d):
		c.t.Fatalf("child %s still running after %v; stderr: %s", c.tag, d, c.stderr.tail())
		return 0
	}
}

// syncBuffer collects a child's stderr.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) tail() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.b.Bytes()
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}
