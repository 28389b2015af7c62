package luashim

import "math"

// Hash commands.
func init() {
	k := func(name string, arity int, run func(*call, []string) any) *command {
		return &command{name: name, arity: arity, firstKey: 1, lastKey: 1, run: run}
	}
	register(
		k("hget", 3, cmdHGet),
		k("hset", -4, cmdHSet),
		k("hsetnx", 4, cmdHSetNX),
		k("hmget", -3, cmdHMGet),
		k("hdel", -3, cmdHDel),
		k("hexists", 3, cmdHExists),
		k("hlen", 2, cmdHLen),
		k("hgetall", 2, cmdHGetAll),
		k("hincrby", 4, cmdHIncrBy),
		k("hkeys", 2, cmdHKeys),
		k("hvals", 2, cmdHVals),
	)
}

// hashAt returns key's hash, nil if the key is absent.
func (c *call) hashAt(key string) (*hashValue, *ReplyError) {
	e := c.lookup(key)
	if e == nil {
		return nil, nil
	}
	h, ok := e.val.(*hashValue)
	if !ok {
		return nil, errWrongType
	}
	return h, nil
}

// hashForWrite returns key's hash, creating an empty one if absent.
func (c *call) hashForWrite(key string) (*hashValue, *ReplyError) {
	h, err := c.hashAt(key)
	if err != nil || h != nil {
		return h, err
	}
	h = newHash()
	c.setValue(key, h)
	return h, nil
}

func cmdHGet(c *call, args []string) any {
	h, err := c.hashAt(args[1])
	if err != nil {
		return err
	}
	if h == nil {
		return nil
	}
	if v, ok := h.values[args[2]]; ok {
		return v
	}
	return nil
}

func cmdHSet(c *call, args []string) any {
	if len(args)%2 != 0 {
		return wrongArgs("hset")
	}
	h, err := c.hashForWrite(args[1])
	if err != nil {
		return err
	}
	var added int64
	for i := 2; i < len(args); i += 2 {
		if h.set(args[i], args[i+1]) {
			added++
		}
	}
	return added
}

func cmdHSetNX(c *call, args []string) any {
	h, err := c.hashForWrite(args[1])
	if err != nil {
		return err
	}
	if _, ok := h.values[args[2]]; ok {
		return int64(0)
	}
	h.set(args[2], args[3])
	return int64(1)
}

func cmdHMGet(c *call, args []string) any {
	h, err := c.hashAt(args[1])
	if err != nil {
		return err
	}
	out := make([]any, len(args)-2)
	for i, f := range args[2:] {
		if h == nil {
			continue
		}
		if v, ok := h.values[f]; ok {
			out[i] = v
		}
	}
	return out
}

func cmdHDel(c *call, args []string) any {
	e := c.lookup(args[1])
	if e == nil {
		return int64(0)
	}
	h, ok := e.val.(*hashValue)
	if !ok {
		return errWrongType
	}
	var n int64
	for _, f := range args[2:] {
		if h.del(f) {
			n++
		}
	}
	c.dropIfEmpty(args[1], e)
	return n
}

func cmdHExists(c *call, args []string) any {
	h, err := c.hashAt(args[1])
	if err != nil {
		return err
	}
	if h == nil {
		return int64(0)
	}
	if _, ok := h.values[args[2]]; ok {
		return int64(1)
	}
	return int64(0)
}

func cmdHLen(c *call, args []string) any {
	h, err := c.hashAt(args[1])
	if err != nil {
		return err
	}
	if h == nil {
		return int64(0)
	}
	return int64(len(h.fields))
}

func cmdHGetAll(c *call, args []string) any {
	return hashList(c, args[1], true, true)
}

func cmdHKeys(c *call, args []string) any { return hashList(c, args[1], true, false) }
func cmdHVals(c *call, args []string) any { return hashList(c, args[1], false, true) }

// hashList replies fields and/or values in the hash's field order.
func hashList(c *call, key string, fields, values bool) any {
	h, err := c.hashAt(key)
	if err != nil {
		return err
	}
	out := []any{}
	if h == nil {
		return out
	}
	for _, f := range h.fields {
		if fields {
			out = append(out, f)
		}
		if values {
			out = append(out, h.values[f])
		}
	}
	return out
}

func cmdHIncrBy(c *call, args []string) any {
	delta, rerr := intArg(args[3])
	if rerr != nil {
		return rerr
	}
	h, err := c.hashAt(args[1])
	if err != nil {
		return err
	}
	var cur int64
	if h != nil {
		if old, ok := h.values[args[2]]; ok {
			n, valid := parseInt(old)
			if !valid {
				return replyErr("ERR hash value is not an integer")
			}
			cur = n
		}
	}
	if (delta > 0 && cur > math.MaxInt64-delta) || (delta < 0 && cur < math.MinInt64-delta) {
		return errOverflow
	}
	cur += delta
	if h == nil {
		h, _ = c.hashForWrite(args[1])
	}
	h.set(args[2], formatInt(cur))
	return cur
}
