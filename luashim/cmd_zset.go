package luashim

import (
	"math"
	"sort"
	"strconv"
	"strings"
)

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

// parseBound parses a min or max of ZCOUNT and ZRANGEBYSCORE: a score,
// or "(" and a score to exclude it.
func parseBound(s string) (score float64, excl, ok bool) {
	s, excl = strings.CutPrefix(s, "(")
	score, ok = parseScore(s)
	return score, excl, ok
}

// membersInRange is ZCOUNT's and ZRANGEBYSCORE's lookup: the members of
// the sorted set args[1] whose scores lie in args[2]..args[3]. They are
// contiguous in the sorted slice.
func (c *call) membersInRange(args []string) ([]ZMember, *ReplyError) {
	lo, loExcl, loOK := parseBound(args[2])
	hi, hiExcl, hiOK := parseBound(args[3])
	if !loOK || !hiOK {
		return nil, errMinMaxFloat
	}
	_, z, err := typedAt(c, args[1], newZSet)
	if err != nil {
		return nil, err
	}
	from := sort.Search(len(z.sorted), func(i int) bool {
		s := z.sorted[i].Score
		return s > lo || (s == lo && !loExcl)
	})
	to := sort.Search(len(z.sorted), func(i int) bool {
		s := z.sorted[i].Score
		return s > hi || (s == hi && hiExcl)
	})
	return z.sorted[from:max(from, to)], nil
}

// cmdZAdd is ZADD in the two forms the scripts use, and refuses others:
// ZADD key [NX] score member, and ZADD key XX GT CH score member.
func cmdZAdd(c *call, args []string) any {
	opts := strings.ToUpper(strings.Join(args[2:len(args)-2], " "))
	nx, keep := opts == "NX", opts == "XX GT CH"
	if opts != "" && !nx && !keep {
		return unsupported("zadd", strings.Join(args[2:], " "))
	}
	score, ok := parseScore(args[len(args)-2])
	if !ok {
		return errNotFloat
	}
	member := args[len(args)-1]
	if keep {
		return zaddKeep(c, args[1], member, score)
	}
	z, err := writableAt(c, args[1], newZSet)
	if err != nil {
		return err
	}
	if _, exists := z.scores[member]; exists && nx || !z.add(member, score) {
		return int64(0) // NX kept the member, or only its score changed
	}
	return int64(1)
}

// zaddKeep is ZADD key XX GT CH score member (fair_heartbeat: a place is
// kept only if it is there, only later): 1 if member's score grew, else 0.
func zaddKeep(c *call, key, member string, score float64) any {
	_, z, err := typedAt(c, key, newZSet)
	if err != nil {
		return err
	}
	if old, exists := z.scores[member]; !exists || score <= old {
		return int64(0)
	}
	z.add(member, score)
	return int64(1)
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

// parseWithScores reads what follows the range of ZRANGE and ZRANGEBYSCORE:
// nothing or WITHSCORES, the one option the scripts pass.
func parseWithScores(cmd string, opts []string) (bool, *ReplyError) {
	opt := strings.ToUpper(strings.Join(opts, " "))
	if opt != "" && opt != "WITHSCORES" {
		return false, unsupported(cmd, opt)
	}
	return opt != "", nil
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
