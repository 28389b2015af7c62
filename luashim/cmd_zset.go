package luashim

import (
	"math"
	"sort"
	"strconv"
	"strings"
)

// Sorted-set commands.
func init() {
	register(
		keyCommand("zadd", -4, cmdZAdd),
		keyCommand("zrem", -3, cmdZRem),
		keyCommand("zscore", 3, cmdZScore),
		keyCommand("zcard", 2, cmdZCard),
		keyCommand("zcount", 4, cmdZCount),
		keyCommand("zrange", -4, cmdZRange),
		keyCommand("zrangebyscore", -4, cmdZRangeByScore),
		keyCommand("zpopmin", -2, cmdZPopMin),
	)
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

// scoreRange is the min and max of ZCOUNT and ZRANGEBYSCORE; a bound
// written "(x" excludes x.
type scoreRange struct {
	min, max         float64
	minExcl, maxExcl bool
}

func parseScoreRange(minArg, maxArg string) (r scoreRange, err *ReplyError) {
	minArg, r.minExcl = strings.CutPrefix(minArg, "(")
	maxArg, r.maxExcl = strings.CutPrefix(maxArg, "(")
	var minOK, maxOK bool
	r.min, minOK = parseScore(minArg)
	r.max, maxOK = parseScore(maxArg)
	if !minOK || !maxOK {
		return r, errMinMaxFloat
	}
	return r, nil
}

// membersInRange is ZCOUNT's and ZRANGEBYSCORE's lookup: the members of
// the sorted set args[1] whose scores lie in args[2]..args[3]. They are
// contiguous in the sorted slice.
func (c *call) membersInRange(args []string) ([]ZMember, *ReplyError) {
	r, err := parseScoreRange(args[2], args[3])
	if err != nil {
		return nil, err
	}
	_, z, err := typedAt(c, args[1], newZSet)
	if err != nil {
		return nil, err
	}
	from := sort.Search(len(z.sorted), func(i int) bool {
		s := z.sorted[i].Score
		return s > r.min || (s == r.min && !r.minExcl)
	})
	to := sort.Search(len(z.sorted), func(i int) bool {
		s := z.sorted[i].Score
		return s > r.max || (s == r.max && r.maxExcl)
	})
	return z.sorted[from:max(from, to)], nil
}

// cmdZAdd is ZADD with the one option the scripts use, NX.
func cmdZAdd(c *call, args []string) any {
	f, i, err := parseZAddFlags(args)
	if err != nil {
		return err
	}
	pairs := args[i:]
	scores := make([]float64, len(pairs)/2)
	for j := range scores {
		s, ok := parseScore(pairs[2*j])
		if !ok {
			return errNotFloat
		}
		scores[j] = s
	}
	if e, _, err := typedAt(c, args[1], newZSet); err != nil || (e == nil && f.xx) {
		if err != nil {
			return err
		}
		return int64(0) // XX never creates the key
	}
	z, _ := writableAt(c, args[1], newZSet)
	var added, changed int64
	for j, score := range scores {
		member := pairs[2*j+1]
		old, exists := z.scores[member]
		switch {
		case exists && (f.nx || (f.gt && score <= old) || score == old):
			continue
		case !exists && f.xx:
			continue
		}
		if z.add(member, score) {
			added++
		} else {
			changed++
		}
	}
	if f.ch {
		return added + changed
	}
	return added
}

// zaddFlags are the ZADD options the scripts use: NX (join), and XX GT CH
// (fair_heartbeat keeps a place only if it is there, only later).
type zaddFlags struct{ nx, xx, gt, ch bool }

// parseZAddFlags reads ZADD's options and returns them with the index of
// the first score, or Redis's error for a bad combination. LT and INCR,
// which no script uses, are refused.
func parseZAddFlags(args []string) (zaddFlags, int, *ReplyError) {
	var f zaddFlags
	i := 2
options:
	for ; i < len(args); i++ {
		switch strings.ToUpper(args[i]) {
		case "NX":
			f.nx = true
		case "XX":
			f.xx = true
		case "GT":
			f.gt = true
		case "CH":
			f.ch = true
		case "LT", "INCR":
			return f, 0, unsupported("zadd", strings.ToUpper(args[i]))
		default:
			break options
		}
	}
	switch n := len(args) - i; {
	case n == 0 || n%2 != 0:
		return f, 0, errSyntax
	case f.nx && f.xx:
		return f, 0, replyErr("ERR XX and NX options at the same time are not compatible")
	case f.nx && f.gt:
		return f, 0, replyErr("ERR GT, LT, and/or NX options at the same time are not compatible")
	}
	return f, i, nil
}

func cmdZRem(c *call, args []string) any {
	return removeEach(c, args[1], newZSet, args[2:], (*zsetValue).remove)
}

func cmdZScore(c *call, args []string) any {
	_, z, err := typedAt(c, args[1], newZSet)
	if err != nil {
		return err
	}
	if s, ok := z.scores[args[2]]; ok {
		return formatNumber(s)
	}
	return nil
}

func cmdZCard(c *call, args []string) any {
	_, z, err := typedAt(c, args[1], newZSet)
	if err != nil {
		return err
	}
	return int64(len(z.sorted))
}

func cmdZCount(c *call, args []string) any {
	ms, err := c.membersInRange(args)
	if err != nil {
		return err
	}
	return int64(len(ms))
}

// membersReply renders members as a flat array, with scores when asked.
func membersReply(ms []ZMember, withScores bool) []any {
	out := make([]any, 0, len(ms)*2)
	for _, m := range ms {
		out = append(out, m.Member)
		if withScores {
			out = append(out, formatNumber(m.Score))
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

// cmdZRange is ZRANGE by index: start and stop are inclusive, negative
// counts from the end.
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
	_, z, err := typedAt(c, args[1], newZSet)
	if err != nil {
		return err
	}
	n := int64(len(z.sorted))
	if start < 0 {
		start = max(start+n, 0)
	}
	if stop < 0 {
		stop += n
	}
	stop = min(stop, n-1)
	if start > stop {
		return []any{}
	}
	return membersReply(z.sorted[start:stop+1], withScores)
}

func cmdZRangeByScore(c *call, args []string) any {
	withScores, err := parseWithScores("zrangebyscore", args[4:])
	if err != nil {
		return err
	}
	ms, err := c.membersInRange(args)
	if err != nil {
		return err
	}
	return membersReply(ms, withScores)
}

// cmdZPopMin is ZPOPMIN without a count, as the scripts call it.
func cmdZPopMin(c *call, args []string) any {
	if len(args) > 2 {
		return unsupported("zpopmin", "count")
	}
	_, z, err := typedAt(c, args[1], newZSet)
	if err != nil {
		return err
	}
	if len(z.sorted) == 0 {
		return []any{}
	}
	first := z.sorted[0]
	z.remove(first.Member)
	c.dropIfEmpty(args[1], z)
	return membersReply([]ZMember{first}, true)
}
