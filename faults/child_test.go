package faults

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lockgen/lockgen/runtime"
	"github.com/redis/go-redis/v9"
)

// Cases that need several OS processes (to SIGKILL or SIGSTOP one of them)
// run the test binary again with childRoleEnv set; TestMain sends it to
// childMain. A child reads commands from stdin, one a line, and reports on
// stdout, one event a line, each line a word and its fields; times are
// Unix nanoseconds of the wall clock, which parent and child share.
const (
	childRoleEnv   = "LOCKGEN_FAULTS_CHILD"  // "locker" or "counter"
	childAddrEnv   = "LOCKGEN_FAULTS_ADDR"   // where to reach Redis (a proxy, often)
	childPrefixEnv = "LOCKGEN_FAULTS_PREFIX" // the Locker's key prefix
	childTagEnv    = "LOCKGEN_FAULTS_TAG"    // "c01": first bytes of the child's holder ids
	childLeaseEnv  = "LOCKGEN_FAULTS_LEASE"  // counter: the lease, a Go duration
	childHoldEnv   = "LOCKGEN_FAULTS_HOLD"   // counter: how long each hold works, a Go duration
)

func childMain(role string) int {
	out := &lineWriter{w: os.Stdout}
	// A short read timeout, so that a child cut off by a blackhole gives up
	// its calls and tries again, as a service would, within the cases' time.
	rdb := redis.NewClient(&redis.Options{Addr: os.Getenv(childAddrEnv), ReadTimeout: time.Second})
	defer rdb.Close()
	var err error
	switch role {
	case "locker":
		err = runLockerChild(rdb, out, os.Stdin)
	case "counter":
		err = runCounterChild(rdb, out, os.Stdin)
	default:
		err = fmt.Errorf("unknown child role %q", role)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	return 0
}

// lineWriter writes whole lines from several goroutines.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (lw *lineWriter) say(fields ...any) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	fmt.Fprintln(lw.w, fields...)
}

func nowNS() int64 { return time.Now().UnixNano() }

// lockerChild takes and gives back locks as the parent says:
//
//	acquire NAME KIND KEY LEASE WAIT   (NAME one letter; WAIT a Go duration, negative for NoWait)
//	release NAME
//	exit
//
// and reports
//
//	event NAME KIND HOLDER AT          every Observer event (busy, gave_up, ...)
//	acquired NAME HOLDER FENCE CALLED RETURNED
//	failed NAME HOLDER CALLED RETURNED ERROR...
//	lost NAME HOLDER AT CAUSE...       the held context was cancelled by a loss
//	released NAME HOLDER CALLED RETURNED ok|ERROR...
//
// Each NAME has a Locker of its own, so that its holder ids (tag + NAME)
// and events are its own.
type lockerChild struct {
	rdb     *redis.Client
	out     *lineWriter
	lockers map[string]*subjectInChild

	mu sync.Mutex // guards held: acquires run in goroutines
}

type subjectInChild struct {
	l    *runtime.Locker
	ids  *idSource
	held *runtime.Held
}

func runLockerChild(rdb *redis.Client, out *lineWriter, in io.Reader) error {
	c := &lockerChild{rdb: rdb, out: out, lockers: map[string]*subjectInChild{}}
	defer func() {
		for _, s := range c.lockers {
			s.l.Close()
		}
	}()
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		var err error
		switch {
		case f[0] == "acquire" && len(f) == 6:
			err = c.acquire(f[1], f[2], f[3], f[4], f[5])
		case f[0] == "release" && len(f) == 2:
			c.release(f[1])
		case f[0] == "exit":
			return nil
		default:
			err = fmt.Errorf("bad command %q", sc.Text())
		}
		if err != nil {
			return err
		}
	}
	return sc.Err()
}

func (c *lockerChild) subject(name string) *subjectInChild {
	if s := c.lockers[name]; s != nil {
		return s
	}
	s := &subjectInChild{ids: newIDSource(os.Getenv(childTagEnv) + name)}
	s.l = runtime.New(c.rdb,
		runtime.WithKeyPrefix(os.Getenv(childPrefixEnv)),
		runtime.WithHolderIDs(s.ids.next),
		runtime.WithObserver(func(e runtime.Event) { c.out.say("event", name, e.Kind, e.Holder, nowNS()) }))
	c.lockers[name] = s
	return s
}

func (c *lockerChild) acquire(name, kind, key, lease, wait string) error {
	lock := runtime.Lock{Key: key}
	var err error
	if lock.Kind, err = parseKind(kind); err != nil {
		return err
	}
	if lock.Lease, err = time.ParseDuration(lease); err != nil {
		return err
	}
	if lock.Wait, err = time.ParseDuration(wait); err != nil {
		return err
	}
	s := c.subject(name)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		called := nowNS()
		h, err := s.l.Acquire(ctx, lock)
		returned := nowNS()
		holder := s.ids.last()
		if err != nil {
			c.out.say("failed", name, holder, called, returned, oneLine(err))
			return
		}
		fence, _ := runtime.Fence(h.Context())
		c.mu.Lock()
		s.held = h
		c.mu.Unlock()
		c.out.say("acquired", name, holder, fence, called, returned)
		<-h.Context().Done()
		if cause := context.Cause(h.Context()); errors.Is(cause, runtime.ErrLockLost) {
			c.out.say("lost", name, holder, nowNS(), oneLine(cause))
		}
	}()
	return nil
}

func (c *lockerChild) release(name string) {
	s := c.lockers[name]
	var h *runtime.Held
	if s != nil {
		c.mu.Lock()
		h, s.held = s.held, nil
		c.mu.Unlock()
	}
	if h == nil {
		c.out.say("released", name, "-", nowNS(), nowNS(), "nothing held")
		return
	}
	called := nowNS()
	err := h.Release()
	returned := nowNS()
	result := "ok"
	if err != nil {
		result = oneLine(err)
	}
	c.out.say("released", name, s.ids.last(), called, returned, result)
}

func parseKind(s string) (runtime.Kind, error) {
	for k := runtime.Mutex; k <= runtime.Semaphore; k++ {
		if k.String() == s {
			return k, nil
		}
	}
	return 0, fmt.Errorf("unknown kind %q", s)
}

func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", " | ") }

// parseNS reads a time a child reported.
func parseNS(s string) time.Time {
	ns, _ := strconv.ParseInt(s, 10, 64)
	return time.Unix(0, ns)
}
