package harness

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis time per cycle, from INFO commandstats. Each cmdstat_ line has the
// microseconds Redis spent executing that command. A script's line
// (EVALSHA) includes the commands the script ran, and Redis 7 counts each
// of those again under its own name (cmdstat_set, cmdstat_get, ...), so the
// sum of every line counts a script's inner calls twice. What a client's
// commands cost is each command counted once: every line of a command the
// clients sent themselves, none of the calls scripts made. The server does
// not say which calls of, say, SET came from a client and which from a
// script; MONITOR does ("[0 lua]"), so a short pass of its own (MONITOR
// costs Redis time, so never during a measured pass) tells, per command
// name, the share of its calls that clients sent.

// callOrigins counts, per command name, the calls MONITOR showed coming
// from clients and from scripts.
type callOrigins map[string]*callOrigin

type callOrigin struct{ direct, fromScript int64 }

// directShare is the share of name's calls that clients sent. name may be
// a commandstats name with a subcommand ("client|setname"); MONITOR shows
// only the command. A command MONITOR never saw counts as sent by a client,
// so that nothing Redis spent is dropped.
func (o callOrigins) directShare(name string) float64 {
	base, _, _ := strings.Cut(name, "|")
	c, ok := o[base]
	if !ok || c.direct+c.fromScript == 0 {
		return 1
	}
	return float64(c.direct) / float64(c.direct+c.fromScript)
}

// directMicros is the Redis time, in µs, of the commands clients sent, each
// counted once: usec holds commandstats' usec per name, origins the shares
// seen by MONITOR. The harness's own commands are left out.
func directMicros(usec map[string]int64, origins callOrigins) float64 {
	var total float64
	for name, us := range usec {
		if !harnessCommands[name] {
			total += float64(us) * origins.directShare(name)
		}
	}
	return total
}

// parseMonitorLine reads a MONITOR line such as
// `1700000000.123456 [0 127.0.0.1:5555] "evalsha" "ab12" "1" "k"` (or
// `[0 lua]` for a call a script made): the command name, lower case, and
// whether a script made it.
func parseMonitorLine(line string) (name string, fromScript, ok bool) {
	// The origin is between the first '[' and the last ']' before the
	// first argument: an IPv6 client shows as [0 [::1]:5555].
	quote := strings.IndexByte(line, '"')
	if quote < 0 {
		return "", false, false
	}
	open := strings.IndexByte(line, '[')
	end := strings.LastIndexByte(line[:quote], ']')
	if open < 0 || end < open {
		return "", false, false
	}
	origin := strings.Fields(line[open+1 : end])
	name, _, found := strings.Cut(line[quote+1:], `"`)
	if len(origin) != 2 || !found || name == "" {
		return "", false, false
	}
	return strings.ToLower(name), origin[1] == "lua", true
}

// monitorTimeout bounds a MONITOR pass: connecting, and reading what the
// server wrote once run has returned.
const monitorTimeout = 30 * time.Second

// watchCallOrigins runs run while a MONITOR connection to addr watches, and
// counts where the calls it caused came from. An ECHO of a unique marker on
// rdb after run tells when every line of run's commands has been read.
func watchCallOrigins(ctx context.Context, addr string, rdb *redis.Client, run func() error) (callOrigins, error) {
	var d net.Dialer
	dctx, cancel := context.WithTimeout(ctx, monitorTimeout)
	defer cancel()
	conn, err := d.DialContext(dctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(monitorTimeout)); err != nil {
		return nil, err
	}
	rd := bufio.NewReader(conn)
	if _, err := conn.Write([]byte("MONITOR\r\n")); err != nil {
		return nil, err
	}
	if line, err := rd.ReadString('\n'); err != nil || strings.TrimSpace(line) != "+OK" {
		return nil, fmt.Errorf("monitor: reply %q, %v", line, err)
	}
	if err := run(); err != nil {
		return nil, err
	}
	marker := fmt.Sprintf("lockbench-monitor-end-%d", time.Now().UnixNano())
	if err := rdb.Echo(ctx, marker).Err(); err != nil {
		return nil, err
	}
	origins := callOrigins{}
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("monitor: %v before the end marker", err)
		}
		if strings.Contains(strings.ToLower(line), `"echo" "`+marker+`"`) {
			return origins, nil
		}
		name, fromScript, ok := parseMonitorLine(strings.TrimPrefix(strings.TrimSpace(line), "+"))
		if !ok {
			continue
		}
		c := origins[name]
		if c == nil {
			c = &callOrigin{}
			origins[name] = c
		}
		if fromScript {
			c.fromScript++
		} else {
			c.direct++
		}
	}
}
