package annotation

// closest returns the word of choices nearest to w, when it is near enough
// to be a typo of it (at most two edits, and fewer than half of w): then a
// diagnostic can say "did you mean", and the parser can count the option as
// given instead of adding a "missing" message for the same slip.
func closest(w string, choices []string) (string, bool) {
	best, bestDist := "", 3
	for _, c := range choices {
		if d := editDistance(w, c); d < bestDist && 2*d < len(w) {
			best, bestDist = c, d
		}
	}
	return best, best != ""
}

// editDistance is the Levenshtein distance of two short ASCII words.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
