package luashim

import (
	"math"
	"strconv"
	"strings"
)

func cmdTime(c *call, _ []string) any {
	us := c.now.UnixMicro()
	return []any{strconv.FormatInt(us/1e6, 10), strconv.FormatInt(us%1e6, 10)}
}

func cmdDel(c *call, args []string) any {
	var n int64
	for _, k := range args[1:] {
		if c.lookup(k) != nil {
			delete(c.s.data, k)
			n++
		}
	}
	return n
}

// expireCommand builds PEXPIRE and PEXPIREAT: the argument is a duration
// (or, when absolute, a Unix time) in milliseconds, then nothing, NX or
// GT, the forms the scripts use.
func expireCommand(absolute bool) func(c *call, args []string) any {
	return func(c *call, args []string) any {
		n, err := intArg(args[2])
		if err != nil {
			return err
		}
		opt := strings.ToUpper(strings.Join(args[3:], " "))
		if opt != "" && opt != "NX" && opt != "GT" {
			return unsupported(args[0], opt)
		}
		when := n
		if !absolute {
			if n > 0 && c.nowMs > math.MaxInt64-n {
				return replyErr("ERR invalid expire time in '" + strings.ToLower(args[0]) + "' command")
			}
			when += c.nowMs
		}
		e := c.lookup(args[1])
		switch {
		case e == nil, opt == "NX" && e.expireAt != 0, opt == "GT" && (e.expireAt == 0 || when <= e.expireAt):
			return int64(0)
		case when <= c.nowMs:
			delete(c.s.data, args[1])
		default:
			e.expireAt = when
		}
		return int64(1)
	}
}

// cmdPTTL replies -2 for no key, -1 for no TTL, else the milliseconds left.
func cmdPTTL(c *call, args []string) any {
	e := c.lookup(args[1])
	switch {
	case e == nil:
		return int64(-2)
	case e.expireAt == 0:
		return int64(-1)
	}
	return max(e.expireAt-c.nowMs, 0)
}
