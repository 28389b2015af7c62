package luashim

// List commands.
func init() {
	k := func(name string, arity int, run func(*call, []string) any) *command {
		return &command{name: name, arity: arity, firstKey: 1, lastKey: 1, run: run}
	}
	register(
		k("lpush", -3, func(c *call, a []string) any { return push(c, a, true) }),
		k("rpush", -3, func(c *call, a []string) any { return push(c, a, false) }),
		k("lpop", -2, func(c *call, a []string) any { return pop(c, a, true) }),
		k("rpop", -2, func(c *call, a []string) any { return pop(c, a, false) }),
		k("lrange", 4, cmdLRange),
		k("llen", 2, cmdLLen),
		k("lrem", 4, cmdLRem),
		k("lindex", 3, cmdLIndex),
	)
}

// listAt returns key's list entry, nil if the key is absent.
func (c *call) listAt(key string) (*entry, *listValue, *ReplyError) {
	e := c.lookup(key)
	if e == nil {
		return nil, nil, nil
	}
	l, ok := e.val.(*listValue)
	if !ok {
		return nil, nil, errWrongType
	}
	return e, l, nil
}

func push(c *call, args []string, left bool) any {
	_, l, err := c.listAt(args[1])
	if err != nil {
		return err
	}
	if l == nil {
		l = &listValue{}
		c.setValue(args[1], l)
	}
	for _, v := range args[2:] {
		if left {
			l.items = append([]string{v}, l.items...)
		} else {
			l.items = append(l.items, v)
		}
	}
	return int64(len(l.items))
}

func pop(c *call, args []string, left bool) any {
	if len(args) > 3 {
		return errSyntax
	}
	count, withCount := int64(1), len(args) == 3
	if withCount {
		n, ok := parseInt(args[2])
		if !ok || n < 0 {
			return replyErr("ERR value is out of range, must be positive")
		}
		count = n
	}
	e, l, err := c.listAt(args[1])
	if err != nil {
		return err
	}
	if l == nil {
		return nil
	}
	n := int(min(count, int64(len(l.items))))
	var taken []string
	if left {
		taken = append(taken, l.items[:n]...)
		l.items = l.items[n:]
	} else {
		for i := 0; i < n; i++ {
			taken = append(taken, l.items[len(l.items)-1-i])
		}
		l.items = l.items[:len(l.items)-n]
	}
	c.dropIfEmpty(args[1], e)
	if !withCount {
		return taken[0]
	}
	out := make([]any, len(taken))
	for i, v := range taken {
		out[i] = v
	}
	return out
}

// rangeBounds turns Redis start/stop indexes (negative from the end,
// inclusive) into a half-open slice range over n elements; ok is false
// when the range is empty.
func rangeBounds(start, stop int64, n int) (from, to int, ok bool) {
	ln := int64(n)
	if start < 0 {
		start += ln
	}
	if stop < 0 {
		stop += ln
	}
	start = max(start, 0)
	if start > stop || start >= ln {
		return 0, 0, false
	}
	stop = min(stop, ln-1)
	return int(start), int(stop) + 1, true
}

func cmdLRange(c *call, args []string) any {
	start, err := intArg(args[2])
	if err != nil {
		return err
	}
	stop, err := intArg(args[3])
	if err != nil {
		return err
	}
	_, l, err := c.listAt(args[1])
	if err != nil {
		return err
	}
	out := []any{}
	if l == nil {
		return out
	}
	if from, to, ok := rangeBounds(start, stop, len(l.items)); ok {
		for _, v := range l.items[from:to] {
			out = append(out, v)
		}
	}
	return out
}

func cmdLLen(c *call, args []string) any {
	_, l, err := c.listAt(args[1])
	if err != nil {
		return err
	}
	if l == nil {
		return int64(0)
	}
	return int64(len(l.items))
}

// cmdLRem removes up to |count| elements equal to the value: from the head
// when count > 0, from the tail when count < 0, all when 0.
func cmdLRem(c *call, args []string) any {
	count, err := intArg(args[2])
	if err != nil {
		return err
	}
	e, l, err := c.listAt(args[1])
	if err != nil {
		return err
	}
	if l == nil {
		return int64(0)
	}
	target := args[3]
	var removed int64
	limit := count
	if limit < 0 {
		limit = -limit
	}
	keep := make([]bool, len(l.items))
	for i := range keep {
		keep[i] = true
	}
	visit := func(i int) {
		if l.items[i] == target && (limit == 0 || removed < limit) {
			keep[i] = false
			removed++
		}
	}
	if count < 0 {
		for i := len(l.items) - 1; i >= 0; i-- {
			visit(i)
		}
	} else {
		for i := range l.items {
			visit(i)
		}
	}
	kept := l.items[:0]
	for i, v := range l.items {
		if keep[i] {
			kept = append(kept, v)
		}
	}
	l.items = kept
	c.dropIfEmpty(args[1], e)
	return removed
}

func cmdLIndex(c *call, args []string) any {
	idx, err := intArg(args[2])
	if err != nil {
		return err
	}
	_, l, err := c.listAt(args[1])
	if err != nil {
		return err
	}
	if l == nil {
		return nil
	}
	if idx < 0 {
		idx += int64(len(l.items))
	}
	if idx < 0 || idx >= int64(len(l.items)) {
		return nil
	}
	return l.items[idx]
}
