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

func cmdZAdd(c *call, args []string) any {
	var nx, xx, gt, lt, ch, incr bool
	i := 2
options:
	for ; i < len(args); i++ {
		switch strings.ToUpper(args[i]) {
		case "NX":
			nx = true
		case "XX":
			xx = true
		case "GT":
			gt = true
		case "LT":
			lt = true
		case "CH":
			ch = true
		case "INCR":
			incr = true
		default:
			break options
		}
	}
	pairs := args[i:]
	if len(pairs) == 0 || len(pairs)%2 != 0 {
		return errSyntax
	}
	if nx && xx {
		return replyErr("ERR XX and NX options at the same time are not compatible")
	}
	if (gt && nx) || (lt && nx) || (gt && lt) {
		return replyErr("ERR GT, LT, and/or NX options at the same time are not compatible")
	}
	if incr && len(pairs) > 2 {
		return replyErr("ERR INCR option supports a single increment-element pair")
	}
	scores := make([]float64, len(pairs)/2)
	for j := range scores {
		f, ok := parseScore(pairs[2*j])
		if !ok {
			return errNotFloat
		}
		scores[j] = f
	}
	e, z, err := c.zsetAt(args[1])
	if err != nil {
		return err
	}
	if z == nil {
		if xx {
			if incr {
				return nil
			}
			return int64(0)
		}
		z = newZSet()
		e = c.setValue(args[1], z)
	}
	var added, changed int64
	var incrResult any
	for j, score := range scores {
		member := pairs[2*j+1]
		old, exists := z.scores[member]
		if incr && exists {
			score += old
			if math.IsNaN(score) {
				c.dropIfEmpty(args[1], e)
				return replyErr("ERR resulting score is not a number (NaN)")
			}
		}
		switch {
		case exists && nx, !exists && xx,
			exists && gt && score <= old, exists && lt && score >= old:
			continue
		}
		if exists {
			if score != old {
				z.add(member, score)
				changed++
			}
		} else {
			z.add(member, score)
			added++
		}
		incrResult = formatScore(score)
	}
	c.dropIfEmpty(args[1], e)
	if incr {
		return incrResult
	}
	if ch {
		return added + changed
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

// rangeQuery is a parsed ZRANGE / ZRANGEBYSCORE.
type rangeQuery struct {
	byScore, rev, withScores bool
	hasLimit                 bool
	offset, count            int64
}

func parseRangeOptions(opts []string, allowByScore bool) (rangeQuery, *ReplyError) {
	var q rangeQuery
	for i := 0; i < len(opts); i++ {
		switch strings.ToUpper(opts[i]) {
		case "WITHSCORES":
			q.withScores = true
		case "BYSCORE":
			if !allowByScore {
				return q, errSyntax
			}
			q.byScore = true
		case "REV":
			if !allowByScore {
				return q, errSyntax
			}
			q.rev = true
		case "BYLEX":
			if !allowByScore {
				return q, errSyntax
			}
			return q, replyErr("ERR lockgen-shim: ZRANGE BYLEX is not supported")
		case "LIMIT":
			if i+2 >= len(opts) {
				return q, errSyntax
			}
			off, err := intArg(opts[i+1])
			if err != nil {
				return q, err
			}
			cnt, err := intArg(opts[i+2])
			if err != nil {
				return q, err
			}
			q.hasLimit, q.offset, q.count = true, off, cnt
			i += 2
		default:
			return q, errSyntax
		}
	}
	return q, nil
}

// applyLimit cuts ms to LIMIT offset count (a negative count: all).
func applyLimit(ms []ZMember, q rangeQuery) []ZMember {
	if !q.hasLimit {
		return ms
	}
	if q.offset < 0 || q.offset >= int64(len(ms)) {
		return nil
	}
	ms = ms[q.offset:]
	if q.count >= 0 && q.count < int64(len(ms)) {
		ms = ms[:q.count]
	}
	return ms
}

func reversed(ms []ZMember) []ZMember {
	out := make([]ZMember, len(ms))
	for i, m := range ms {
		out[len(ms)-1-i] = m
	}
	return out
}

func cmdZRange(c *call, args []string) any {
	q, err := parseRangeOptions(args[4:], true)
	if err != nil {
		return err
	}
	if q.hasLimit && !q.byScore {
		return replyErr("ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX")
	}
	if q.byScore {
		minArg, maxArg := args[2], args[3]
		if q.rev {
			minArg, maxArg = maxArg, minArg
		}
		return scoreRangeReply(c, args[1], minArg, maxArg, q)
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
	ms := z.sorted
	if q.rev {
		ms = reversed(ms)
	}
	from, to, ok := rangeBounds(start, stop, len(ms))
	if !ok {
		return []any{}
	}
	return membersReply(ms[from:to], q.withScores)
}

func cmdZRangeByScore(c *call, args []string) any {
	q, err := parseRangeOptions(args[4:], false)
	if err != nil {
		return err
	}
	return scoreRangeReply(c, args[1], args[2], args[3], q)
}

func scoreRangeReply(c *call, key, minArg, maxArg string, q rangeQuery) any {
	lo, hi, err := parseRange(minArg, maxArg)
	if err != nil {
		return err
	}
	_, z, err := c.zsetAt(key)
	if err != nil {
		return err
	}
	if z == nil {
		return []any{}
	}
	from, to := z.scoreRange(lo, hi)
	ms := z.sorted[from:to]
	if q.rev {
		ms = reversed(ms)
	}
	return membersReply(applyLimit(ms, q), q.withScores)
}

// removeRange deletes z.sorted[from:to].
func (z *zsetValue) removeRange(from, to int) int64 {
	for _, m := range z.sorted[from:to] {
		delete(z.scores, m.Member)
	}
	z.sorted = append(z.sorted[:from], z.sorted[to:]...)
	return int64(to - from)
}

func cmdZPopMin(c *call, args []string) any {
	if len(args) > 3 {
		return errSyntax
	}
	count := int64(1)
	if len(args) == 3 {
		n, ok := parseInt(args[2])
		if !ok || n < 0 {
			return replyErr("ERR value is out of range, must be positive")
		}
		count = n
	}
	e, z, err := c.zsetAt(args[1])
	if err != nil {
		return err
	}
	if z == nil {
		return []any{}
	}
	n := int(min(count, int64(len(z.sorted))))
	out := membersReply(z.sorted[:n], true)
	z.removeRange(0, n)
	c.dropIfEmpty(args[1], e)
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
