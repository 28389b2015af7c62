package luashim

import (
	"math"
	"strings"
)

// Generic key commands: TIME, DEL, EXISTS, TYPE, the EXPIRE and TTL
// families, PERSIST, and the Do-only FLUSHALL, FLUSHDB and DBSIZE.
func init() {
	register(
		&command{name: "time", arity: 1, run: cmdTime},
		&command{name: "del", arity: -2, firstKey: 1, lastKey: -1, run: cmdDel},
		&command{name: "exists", arity: -2, firstKey: 1, lastKey: -1, run: cmdExists},
		&command{name: "type", arity: 2, firstKey: 1, lastKey: 1, run: cmdType},
		&command{name: "pexpire", arity: -3, firstKey: 1, lastKey: 1, run: expireCommand(false, 1)},
		&command{name: "expire", arity: -3, firstKey: 1, lastKey: 1, run: expireCommand(false, 1000)},
		&command{name: "pexpireat", arity: -3, firstKey: 1, lastKey: 1, run: expireCommand(true, 1)},
		&command{name: "pttl", arity: 2, firstKey: 1, lastKey: 1, run: ttlCommand(1)},
		&command{name: "ttl", arity: 2, firstKey: 1, lastKey: 1, run: ttlCommand(1000)},
		&command{name: "persist", arity: 2, firstKey: 1, lastKey: 1, run: cmdPersist},
		&command{name: "flushall", arity: -1, run: cmdFlush},
		&command{name: "flushdb", arity: -1, run: cmdFlush},
		&command{name: "dbsize", arity: 1, run: cmdDBSize},
	)
}

func cmdTime(c *call, _ []string) any {
	us := c.now.UnixMicro()
	return []any{formatInt(us / 1e6), formatInt(us % 1e6)}
}

func cmdDel(c *call, args []string) any {
	var n int64
	for _, k := range args[1:] {
		if c.lookup(k) != nil {
			delete(c.s.data.m, k)
			n++
		}
	}
	return n
}

func cmdExists(c *call, args []string) any {
	var n int64
	for _, k := range args[1:] {
		if c.lookup(k) != nil {
			n++
		}
	}
	return n
}

func cmdType(c *call, args []string) any {
	e := c.lookup(args[1])
	if e == nil {
		return Status("none")
	}
	return Status(e.val.typeName())
}

// expireCommand builds EXPIRE, PEXPIRE and PEXPIREAT: the argument is a
// duration (or, when absolute, a Unix time) in units of unitMs
// milliseconds, followed by at most one of NX, XX, GT, LT.
func expireCommand(absolute bool, unitMs int64) func(c *call, args []string) any {
	return func(c *call, args []string) any {
		n, err := intArg(args[2])
		if err != nil {
			return err
		}
		var nx, xx, gt, lt bool
		for _, opt := range args[3:] {
			switch strings.ToUpper(opt) {
			case "NX":
				nx = true
			case "XX":
				xx = true
			case "GT":
				gt = true
			case "LT":
				lt = true
			default:
				return replyErr("ERR Unsupported option " + opt)
			}
		}
		if nx && (xx || gt || lt) {
			return replyErr("ERR NX and XX, GT or LT options at the same time are not compatible")
		}
		if gt && lt {
			return replyErr("ERR GT and LT options at the same time are not compatible")
		}
		invalid := func() *ReplyError {
			return replyErr("ERR invalid expire time in '" + strings.ToLower(args[0]) + "' command")
		}
		if n > math.MaxInt64/unitMs || n < math.MinInt64/unitMs {
			return invalid()
		}
		when := n * unitMs
		if !absolute {
			if when > 0 && c.nowMs > math.MaxInt64-when {
				return invalid()
			}
			when += c.nowMs
		}
		e := c.lookup(args[1])
		if e == nil {
			return int64(0)
		}
		switch {
		case nx && e.expireAt != 0,
			xx && e.expireAt == 0,
			gt && (e.expireAt == 0 || when <= e.expireAt),
			lt && e.expireAt != 0 && when >= e.expireAt:
			return int64(0)
		}
		if when <= c.nowMs {
			delete(c.s.data.m, args[1])
			return int64(1)
		}
		e.expireAt = when
		return int64(1)
	}
}

// ttlCommand builds PTTL and TTL: -2 no key, -1 no TTL, else the time left
// in units of unitMs, rounded to nearest as Redis does.
func ttlCommand(unitMs int64) func(c *call, args []string) any {
	return func(c *call, args []string) any {
		e := c.lookup(args[1])
		switch {
		case e == nil:
			return int64(-2)
		case e.expireAt == 0:
			return int64(-1)
		}
		left := max(e.expireAt-c.nowMs, 0)
		return (left + unitMs/2) / unitMs
	}
}

func cmdPersist(c *call, args []string) any {
	e := c.lookup(args[1])
	if e == nil || e.expireAt == 0 {
		return int64(0)
	}
	e.expireAt = 0
	return int64(1)
}

func cmdFlush(c *call, args []string) any {
	for _, opt := range args[1:] {
		if u := strings.ToUpper(opt); u != "SYNC" && u != "ASYNC" {
			return errSyntax
		}
	}
	clear(c.s.data.m)
	return Status("OK")
}

func cmdDBSize(c *call, _ []string) any {
	var n int64
	for k := range c.s.data.m {
		if c.lookup(k) != nil {
			n++
		}
	}
	return n
}
