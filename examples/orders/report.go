package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"
)

// Report collects what happened during one scene of the demo — who asked,
// who got the lock when and with which fencing token, who finished — and
// prints it as a timeline a person reads at a glance.
type Report struct {
	mu      sync.Mutex
	start   time.Time
	events  []event
	running map[string]int // op -> calls inside the method right now
	peak    map[string]int // op -> most calls inside at once
}

type event struct {
	at    time.Duration
	seq   int
	who   string
	what  string
	fence int64
}

func NewReport() *Report {
	return &Report{start: time.Now(), running: map[string]int{}, peak: map[string]int{}}
}

func (r *Report) add(who, what string, fence int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, event{at: time.Since(r.start), seq: len(r.events), who: who, what: what, fence: fence})
}

// Asked records a caller about to call a locked method.
func (r *Report) Asked(who string) { r.add(who, "asks", 0) }

// Granted records a caller inside the method, i.e. holding its lock.
func (r *Report) Granted(ctx context.Context, op, who string) {
	r.mu.Lock()
	r.running[op]++
	if r.running[op] > r.peak[op] {
		r.peak[op] = r.running[op]
	}
	r.mu.Unlock()
	r.add(who, "GOT the lock", fenceOf(ctx))
}

// Done records a caller leaving the method (the wrapper releases next).
func (r *Report) Done(op, who string) {
	r.mu.Lock()
	r.running[op]--
	r.mu.Unlock()
}

// Returned records what the wrapper returned to the caller.
func (r *Report) Returned(who string, err error) {
	if err != nil {
		r.add(who, "returned: "+err.Error(), 0)
		return
	}
	r.add(who, "returned ok", 0)
}

// Note records a free-form line.
func (r *Report) Note(who, what string) { r.add(who, what, 0) }

// Peak is the most calls of op that were inside the method at once.
func (r *Report) Peak(op string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.peak[op]
}

// Order returns the callers in the order of their first event named what.
func (r *Report) Order(what string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var who []string
	for _, e := range r.sorted() {
		if e.what == what {
			who = append(who, e.who)
		}
	}
	return who
}

// Fences returns the fencing tokens in grant order.
func (r *Report) Fences() []int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var f []int64
	for _, e := range r.sorted() {
		if e.fence != 0 {
			f = append(f, e.fence)
		}
	}
	return f
}

func (r *Report) sorted() []event {
	ev := append([]event(nil), r.events...)
	sort.SliceStable(ev, func(i, j int) bool {
		if ev[i].at != ev[j].at {
			return ev[i].at < ev[j].at
		}
		return ev[i].seq < ev[j].seq
	})
	return ev
}

// Print writes the timeline.
func (r *Report) Print(w io.Writer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.sorted() {
		line := fmt.Sprintf("  %+6dms  %-8s %s", e.at.Milliseconds(), e.who, e.what)
		if e.fence != 0 {
			line += fmt.Sprintf("   fence %d", e.fence)
		}
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
}
