package generator

// The order of the keys of one Acquire call, for the lock-order check. The
// patterns themselves, and when two may render the same lock, are in
// keypattern.go.

// takenBefore reports whether the runtime takes a before b when one Acquire
// call asks for both, and whether that is known from the templates alone.
// Acquire sorts by base key, family + ":{" + key + "}" after a common
// prefix, and holds the earlier locks while it waits for later ones. The
// order is known when the base keys differ at a byte before any
// placeholder; a placeholder there could render anything.
func takenBefore(a, b keyPattern) (before, known bool) {
	if a.family != b.family {
		return a.family+":{" < b.family+":{", true
	}
	for i := 0; ; i++ {
		ca, cb := baseByte(a.tokens, i), baseByte(b.tokens, i)
		switch {
		case ca == wildcard || cb == wildcard:
			return false, false
		case ca != cb:
			return ca < cb, true
		case ca == '}':
			return false, false // the same key
		}
	}
}

// baseByte is the i-th token of the key followed by the closing '}' of the
// base key.
func baseByte(tokens []int, i int) int {
	if i < len(tokens) {
		return tokens[i]
	}
	return '}'
}
