package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/lockgen/lockgen/runtime"
)

// list prints one line per lock found: LOCK (kind:key), holder, lease
// left, waiters. A lock left only as its fence floor (a tombstone) shows
// holder "-".
func (c *locksCmd) list(ctx context.Context, conn *redisConn, l *runtime.Locker) error {
	pattern := "*"
	if len(c.operands) == 1 {
		pattern = c.operands[0]
	}
	found, err := conn.scanLocks(ctx, *c.prefix, pattern)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "LOCK\tHOLDER\tLEASE\tWAITERS")
	for _, f := range found {
		st, err := l.Inspect(ctx, f.lock)
		if err != nil {
			return err
		}
		holder, lease := "-", "-"
		if len(st.Holders) > 0 {
			holder, lease = st.Holders[0].ID, roundLeft(st.Holders[0].LeaseLeft)
		}
		if len(st.Holders) > 1 {
			holder += fmt.Sprintf(" (+%d)", len(st.Holders)-1)
		}
		waiters := len(st.Waiters)
		if st.WriterWaiting != nil {
			waiters++
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%d\n", f.name, holder, lease, waiters)
	}
	return w.Flush()
}

// writeState prints one lock for a person.
func writeState(out io.Writer, st runtime.LockState) {
	fmt.Fprintf(out, "%s  (Redis key %s)\n", lockName(st.Kind, st.Key), st.Base)
	fmt.Fprintf(out, "  last fence  %d\n", st.LastFence)
	if st.Kind == runtime.Semaphore {
		fmt.Fprintf(out, "  permits     %d in use\n", len(st.Holders))
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	if len(st.Holders) == 0 {
		fmt.Fprintln(w, "  not held")
	} else {
		fmt.Fprintln(w, "  HOLDER\tSIDE\tFENCE\tLEASE LEFT")
		for _, h := range st.Holders {
			fmt.Fprintf(w, "  %s\t%s\t%d\t%s\n", h.ID, h.Kind, h.Fence, roundLeft(h.LeaseLeft))
		}
	}
	if len(st.Waiters) > 0 {
		header := "  REGISTERED (next first)\tLIVES"
		if st.Kind == runtime.Fair {
			header = "  QUEUED (in order)\tPLACE LIVES"
		}
		fmt.Fprintln(w, header)
		for _, q := range st.Waiters {
			fmt.Fprintf(w, "  %s\t%s\n", q.ID, roundLeft(q.Left))
		}
	}
	if q := st.WriterWaiting; q != nil {
		fmt.Fprintln(w, "  WRITER WAITING\tNEW READERS WAIT")
		fmt.Fprintf(w, "  %s\t%s\n", q.ID, roundLeft(q.Left))
	}
	w.Flush()
}

// roundLeft prints a time left to the millisecond, or to the tenth of a
// second past 10 s.
func roundLeft(d time.Duration) string {
	if d >= 10*time.Second {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Millisecond).String()
}

// jsonLock is the -json form of a LockState: times in ms, kinds spelt out.
type jsonLock struct {
	Lock          string       `json:"lock"`
	Kind          string       `json:"kind"`
	Key           string       `json:"key"`
	RedisKey      string       `json:"redis_key"`
	LastFence     int64        `json:"last_fence"`
	Holders       []jsonHolder `json:"holders"`
	Waiters       []jsonWaiter `json:"waiters"`
	WriterWaiting *jsonWaiter  `json:"writer_waiting,omitempty"`
}

type jsonHolder struct {
	ID          string `json:"id"`
	Side        string `json:"side"`
	Fence       int64  `json:"fence"`
	LeaseLeftMS int64  `json:"lease_left_ms"`
}

type jsonWaiter struct {
	ID     string `json:"id"`
	LeftMS int64  `json:"left_ms"`
}

func writeJSON(out io.Writer, states []runtime.LockState) error {
	locks := make([]jsonLock, 0, len(states))
	for _, st := range states {
		name := lockName(st.Kind, st.Key)
		kind, _, _ := strings.Cut(name, ":")
		j := jsonLock{Lock: name, Kind: kind, Key: st.Key, RedisKey: st.Base, LastFence: st.LastFence,
			Holders: []jsonHolder{}, Waiters: []jsonWaiter{}}
		for _, h := range st.Holders {
			j.Holders = append(j.Holders, jsonHolder{h.ID, h.Kind.String(), h.Fence, h.LeaseLeft.Milliseconds()})
		}
		for _, q := range st.Waiters {
			j.Waiters = append(j.Waiters, jsonWaiter{q.ID, q.Left.Milliseconds()})
		}
		if q := st.WriterWaiting; q != nil {
			j.WriterWaiting = &jsonWaiter{q.ID, q.Left.Milliseconds()}
		}
		locks = append(locks, j)
	}
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(locks)
}
