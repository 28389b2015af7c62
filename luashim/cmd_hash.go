package luashim

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
		k("hgetall", 2, cmdHGetAll),
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

// cmdHGetAll replies fields and values in the hash's field order.
func cmdHGetAll(c *call, args []string) any {
	h, err := c.hashAt(args[1])
	if err != nil {
		return err
	}
	out := []any{}
	if h == nil {
		return out
	}
	for _, f := range h.fields {
		out = append(out, f, h.values[f])
	}
	return out
}
