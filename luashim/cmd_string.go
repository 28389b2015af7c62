package luashim

import (
	"math"
	"strings"
)

// stringAt returns key's string as a reply: the string, nil for a missing
// key, or WRONGTYPE.
func (c *call) stringAt(key string) any {
	e, v, err := typedAt(c, key, func() *stringValue { return nil })
	switch {
	case err != nil:
		return err
	case e == nil:
		return nil
	}
	return v.s
}

func cmdGet(c *call, args []string) any { return c.stringAt(args[1]) }

// cmdSet is SET in the four forms the scripts use: no option, PX ms,
// KEEPTTL, and KEEPTTL GET XX (replace the value only if there is one, and
// reply the old one); any other is refused.
func cmdSet(c *call, args []string) any {
	key := args[1]
	e := c.lookup(key)
	var reply any = Status("OK")
	var expireAt int64 // Unix ms; 0 = no TTL
	switch opts := strings.ToUpper(strings.Join(args[3:], " ")); {
	case opts == "":
	case len(args) == 5 && strings.EqualFold(args[3], "PX"):
		n, err := intArg(args[4])
		if err != nil {
			return err
		}
		if n <= 0 || n > math.MaxInt64-c.nowMs {
			return replyErr("ERR invalid expire time in 'set' command")
		}
		expireAt = c.nowMs + n
	case opts == "KEEPTTL GET XX":
		reply = c.stringAt(key)
		if _, ok := reply.(string); !ok {
			return reply // nil: XX leaves a missing key missing; or WRONGTYPE
		}
		fallthrough
	case opts == "KEEPTTL":
		if e != nil {
			expireAt = e.expireAt
		}
	default:
		return unsupported("set", opts)
	}
	c.setValue(key, &stringValue{s: args[2]}).expireAt = expireAt
	return reply
}
