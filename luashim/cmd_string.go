package luashim

import (
	"math"
	"strings"
)

// String commands: GET and SET.
func init() {
	register(
		&command{name: "get", arity: 2, firstKey: 1, lastKey: 1, run: cmdGet},
		&command{name: "set", arity: -3, firstKey: 1, lastKey: 1, run: cmdSet},
	)
}

// stringAt returns key's string value; ok is false when the key is absent.
func (c *call) stringAt(key string) (s string, ok bool, err *ReplyError) {
	e := c.lookup(key)
	if e == nil {
		return "", false, nil
	}
	sv, isString := e.val.(*stringValue)
	if !isString {
		return "", false, errWrongType
	}
	return sv.s, true, nil
}

func cmdGet(c *call, args []string) any {
	s, ok, err := c.stringAt(args[1])
	switch {
	case err != nil:
		return err
	case !ok:
		return nil
	}
	return s
}

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
		old, ok, err := c.stringAt(key)
		if err != nil {
			return err
		}
		reply = nil
		if ok {
			reply = old
		}
	}
	e := c.lookup(key)
	if o.xx && e == nil {
		if o.get {
			return reply
		}
		return nil
	}
	keep := int64(0)
	if o.keepTTL && e != nil {
		keep = e.expireAt
	}
	ne := c.setValue(key, &stringValue{s: val})
	ne.expireAt = keep
	if o.expireAt != 0 {
		ne.expireAt = o.expireAt
	}
	return reply
}
