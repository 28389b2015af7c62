package luashim

import (
	"math"
	"sort"
	"strconv"
	"strings"
)

// Sorted-set commands.
func init() {
	k := func(name string, arity int, run func(*call, []string) any) *command {
		return &command{name: name, arity: arity, firstKey: 1, lastKey: 1, run: run}
	}
	register(
		k("zadd", -4, cmdZAdd),
		k("zrem", -3, cmdZRem),
		k("zscore", 3, cmdZScore),
		k("zcard", 2, cmdZCard),
		k("zcount", 4, cmdZCount),
		k("zrange", -4, cmdZRange),
		k("zrangebyscore", -4, cmdZRangeByScore),
		k("zpopmin", -2, cmdZPopMin),
	)
}

// zsetAt returns key's sorted-set entry, nil if the key is absent.
func (c *call) zsetAt(key string) (*entry, *zsetValue, *ReplyError) {
	e := c.lookup(key)
	if e == nil {
		return nil, nil, nil
	}
	z, ok := e.val.(*zsetValue)
	if !ok {
		return nil, nil, errWrongType
	}
	return e, z, nil
}

// parseScore parses a score the way Redis's strtod-based parser accepts
// it: decimal or exponent notation, "inf", "+inf", "-inf"; no NaN, no
// leading space, nothing out of double range.
func parseScore(s string) (float64, bool) {
	if s == "" || s[0] == ' ' || s[0] == '\t' || strings.Contains(s, "_") {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

// scoreBound is one end of a score range: "(x" excludes x.
type scoreBound struct {
	v         float64
	exclusive bool
}

func parseBound(s string) (scoreBound, bool) {
	var b scoreBound
	if strings.HasPrefix(s, "(") {
		b.exclusive = true
		s = s[1:]
	}
	v, ok := parseScore(s)
	b.v = v
	return b, ok
}

func (b scoreBound) belowOrAt(score float64) bool { // b is a minimum
	if b.exclusive {
		return score > b.v
	}
	return score >= b.v
}

func (b scoreBound) aboveOrAt(score float64) bool { // b is a maximum
	if b.exclusive {
		return score < b.v
	}
	return score <= b.v
}

// scoreRange returns the index range [from, to) of members within min..max.
func (z *zsetValue) scoreRange(lo, hi scoreBound) (from, to int) {
	from = sort.Search(len(z.sorted), func(i int) bool { return lo.belowOrAt(z.sorted[i].Score) })
	to = sort.Search(len(z.sorted), func(i int) bool { return !hi.aboveOrAt(z.sorted[i].Score) })
	if to < from {
		to = from
	}
	return from, to
}

func parseRange(minArg, maxArg string) (lo, hi scoreBound, err *ReplyError) {
	lo, ok1 := parseBound(minArg)
	hi, ok2 := parseBound(maxArg)
	if !ok1 || !ok2 {
		return lo, hi, errMinMaxFloat
	}
	return lo, hi, nil
}

// cmdZAdd is ZADD with the one option the scripts use, NX.
func cmdZAdd(c *call, args []string) any {
	nx := false
	i := 2
	for ; i < len(args); i++ {
		opt := strings.ToUpper(args[i])
		if opt == "XX" || opt == "GT" || opt == "LT" || opt == "CH" || opt == "INCR" {
			return unsupported("zadd", opt)
		}
		if opt != "NX" {
			break
		}
		nx = true
	}
	pairs := args[i:]
	if len(pairs) == 0 || len(pairs)%2 != 0 {
		return errSyntax
	}
	scores := make([]float64, len(pairs)/2)
	for j := range scores {
		f, ok := parseScore(pairs[2*j])
		if !ok {
			return errNotFloat
		}
		scores[j] = f
	}
	_, z, err := c.zsetAt(args[1])
	if err != nil {
		return err
	}
	if z == nil {
		z = newZSet()
		c.setValue(args[1], z)
	}
	var added int64
	for j, score := range scores {
		member := pairs[2*j+1]
		if _, exists := z.scores[member]; exists && nx {
			continue
		}
		if z.add(member, score) {
			added++
		}
	}
	return added
}

func cmdZRem(c *call, args []string) any {
	e, z, err := c.zsetAt(args[1])
	if err != nil {
		return err
	}
	if z == nil {
		return int64(0)
	}
	var n int64
	for _, m := range args[2:] {
		if z.remove(m) {
			n++
		}
	}
	c.dropIfEmpty(args[1], e)
	return n
}

func cmdZScore(c *call, args []string) any {
	_, z, err := c.zsetAt(args[1])
	if err != nil {
		return err
	}
	if z == nil {
		return nil
	}
	if s, ok := z.scores[args[2]]; ok {
		return formatScore(s)
	}
	return nil
}

func cmdZCard(c *call, args []string) any {
	_, z, err := c.zsetAt(args[1])
	if err != nil {
		return err
	}
	if z == nil {
		return int64(0)
	}
	return int64(len(z.sorted))
}

func cmdZCount(c *call, args []string) any {
	lo, hi, err := parseRange(args[2], args[3])
	if err != nil {
		return err
	}
	_, z, err := c.zsetAt(args[1])
	if err != nil {
		return err
	}
	if z == nil {
		return int64(0)
	}
	from, to := z.scoreRange(lo, hi)
	return int64(to - from)
}

// membersReply renders members as a flat array, with scores when asked.
func membersReply(ms []ZMember, withScores bool) []any {
	out := make([]any, 0, len(ms)*2)
	for _, m := range ms {
		out = append(out, m.Member)
		if withScores {
			out = append(out, formatScore(m.Score))
		}
	}
	return out
}

// parseWithScores reads the options of ZRANGE and ZRANGEBYSCORE, of which
// the scripts use only WITHSCORES; the others Redis knows are refused.
func parseWithScores(cmd string, opts []string) (bool, *ReplyError) {
	withScores := false
	for _, opt := range opts {
		switch u := strings.ToUpper(opt); {
		case u == "WITHSCORES":
			withScores = true
		case u == "LIMIT" || (cmd == "zrange" && (u == "BYSCORE" || u == "BYLEX" || u == "REV")):
			return false, unsupported(cmd, u)
		default:
			return false, errSyntax
		}
	}
	return withScores, nil
}

// cmdZRange is ZRANGE by index.
func cmdZRange(c *call, args []string) any {
	withScores, err := parseWithScores("zrange", args[4:])
	if err != nil {
		return err
	}
	start, err := intArg(args[2])
	if err != nil {
		return err
	}
	stop, err := intArg(args[3])
	if err != nil {
		return err
	}
	_, z, err := c.zsetAt(args[1])
	if err != nil {
		return err
	}
	if z == nil {
		return []any{}
	}
	from, to, ok := rangeBounds(start, stop, len(z.sorted))
	if !ok {
		return []any{}
	}
	return membersReply(z.sorted[from:to], withScores)
}

func cmdZRangeByScore(c *call, args []string) any {
	withScores, err := parseWithScores("zrangebyscore", args[4:])
	if err != nil {
		return err
	}
	lo, hi, err := parseRange(args[2], args[3])
	if err != nil {
		return err
	}
	_, z, err := c.zsetAt(args[1])
	if err != nil {
		return err
	}
	if z == nil {
		return []any{}
	}
	from, to := z.scoreRange(lo, hi)
	return membersReply(z.sorted[from:to], withScores)
}

// cmdZPopMin is ZPOPMIN without a count, as the scripts call it.
func cmdZPopMin(c *call, args []string) any {
	if len(args) > 2 {
		return unsupported("zpopmin", "count")
	}
	e, z, err := c.zsetAt(args[1])
	if err != nil {
		return err
	}
	if z == nil {
		return []any{}
	}
	first := z.sorted[0]
	z.remove(first.Member)
	c.dropIfEmpty(args[1], e)
	return membersReply([]ZMember{first}, true)
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
