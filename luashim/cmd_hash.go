package luashim

func cmdHGet(c *call, args []string) any {
	_, h, err := typedAt(c, args[1], newHash)
	if err != nil {
		return err
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
	h, err := writableAt(c, args[1], newHash)
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
	h, err := writableAt(c, args[1], newHash)
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
	_, h, err := typedAt(c, args[1], newHash)
	if err != nil {
		return err
	}
	out := make([]any, len(args)-2)
	for i, f := range args[2:] {
		if v, ok := h.values[f]; ok {
			out[i] = v
		}
	}
	return out
}

func cmdHDel(c *call, args []string) any {
	return removeEach(c, args[1], newHash, args[2:], (*hashValue).del)
}

// cmdHGetAll replies fields and values in the hash's field order.
func cmdHGetAll(c *call, args []string) any {
	_, h, err := typedAt(c, args[1], newHash)
	if err != nil {
		return err
	}
	out := []any{}
	for _, f := range h.fields {
		out = append(out, f, h.values[f])
	}
	return out
}
