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

// setOptions are SET's flags after the value.
type setOptions struct {
	xx, get, keepTTL bool
	expireAt         int64 // Unix ms; 0 = none
}

// parseSetOptions reads the options the scripts use, XX, GET, KEEPTTL and
// PX; the others Redis knows are refused.
func parseSetOptions(c *call, opts []string) (setOptions, *ReplyError) {
	var o setOptions
	for i := 0; i < len(opts); i++ {
		switch opt := strings.ToUpper(opts[i]); opt {
		case "XX":
			o.xx = true
		case "GET":
			o.get = true
		case "KEEPTTL":
			if o.expireAt != 0 {
				return o, errSyntax
			}
			o.keepTTL = true
		case "PX":
			if o.keepTTL || i+1 >= len(opts) { // a second PX wins, as in Redis
				return o, errSyntax
			}
			i++
			n, err := intArg(opts[i])
			if err != nil {
				return o, err
			}
			if n <= 0 || n > math.MaxInt64-c.nowMs {
				return o, replyErr("ERR invalid expire time in 'set' command")
			}
			o.expireAt = c.nowMs + n
		case "NX", "EX", "EXAT", "PXAT":
			return o, unsupported("set", opt)
		default:
			return o, errSyntax
		}
	}
	return o, nil
}

func cmdSet(c *call, args []string) any {
	key, val := args[1], args[2]
	o, err := parseSetOptions(c, args[3:])
	if err != nil {
		return err
	}
	var reply any = Status("OK")
	if o.get {
		reply = c.stringAt(key)
		if err, ok := reply.(*ReplyError); ok {
			return err
		}
	}
	e := c.lookup(key)
	if o.xx && e == nil {
		return nil // with GET, too: the old value is nil
	}
	if o.keepTTL && e != nil {
		o.expireAt = e.expireAt // KEEPTTL and PX exclude each other
	}
	c.setValue(key, &stringValue{s: val}).expireAt = o.expireAt
	return reply
}
