package annotation

import (
	"slices"
	"strings"
)

// Lookalike is a comment line that looks like an annotation but is not read
// as one: `// lock:mutex ...`, `//Lock:mutex ...`, `/* lock:mutex ... */`,
// `//lockgen:mutex ...`, `// @lock mutex key=...`. lockgen refuses such a
// line instead of ignoring it, so that a method is never left unlocked by a
// typo.
type Lookalike struct {
	Offset int    // in the comment text: 0, or where a later line of a block comment starts
	Wrote  string // the prefix as written, such as "// lock:"
	Why    string // what keeps it from being an annotation
	Want   string // the line as an annotation: //lock:mutex key=a:<id>
}

// FindLookalikes returns the look-alike lines of one comment (the full text,
// as go/ast gives it in ast.Comment.Text, "//..." or "/*...*/"). A comment
// that Is an annotation has none: the parser diagnoses it.
//
// A line looks like an annotation when, after the comment marker and any
// spaces (and, in a block comment, a leading '*'), it starts with "lock" or
// "lockgen" in any case, possibly after '@' or '+', then optional spaces, a
// ':' (optional when a kind follows), optional spaces, and either a kind
// name in any case or text containing "key=" (spaces allowed around '=').
func FindLookalikes(text string) []Lookalike {
	if Is(text) {
		return nil
	}
	switch {
	case strings.HasPrefix(text, "//"):
		if l, ok := lookalikeLine(text, 2, false); ok {
			return []Lookalike{l}
		}
		return nil
	case strings.HasPrefix(text, "/*"):
		body := strings.TrimSuffix(text[2:], "*/")
		var out []Lookalike
		for start := 2; start <= 2+len(body); {
			end := strings.IndexByte(text[start:2+len(body)], '\n')
			if end < 0 {
				end = 2 + len(body)
			} else {
				end += start
			}
			if l, ok := lookalikeLine(text[:end], start, true); ok {
				out = append(out, l)
			}
			start = end + 1
		}
		return out
	}
	return nil
}

// lookalikeLine examines text[start:], one line without its newline.
func lookalikeLine(text string, start int, block bool) (Lookalike, bool) {
	line := text[start:]
	j, why, ok := lockWord(line, block)
	if !ok {
		return Lookalike{}, false
	}
	c := skipBlanks(line, j)
	colon := c < len(line) && line[c] == ':'
	k := c
	if colon {
		k = skipBlanks(line, c+1)
	}
	switch {
	case !colon:
		why = append(why, "no colon after lock")
	case c > j || k > c+1:
		why = append(why, "spaces around the colon")
	}
	kindEnd := k
	for kindEnd < len(line) && isLetter(line[kindEnd]) {
		kindEnd++
	}
	kind, isKind := kindFold(line[k:kindEnd])
	rest := line[kindEnd:]
	switch {
	case isKind && colon && k == c+1: // compact: lock:mutex
	case isKind && hasKeyOption(rest):
	case colon && hasKeyOption(line[k:]):
		kind, rest = "<kind>", " "+line[k:]
	default:
		return Lookalike{}, false
	}
	if isKind && line[k:kindEnd] != string(kind) && !slices.Contains(why, "upper case") {
		why = append(why, "upper case")
	}
	wrote := text[:start] + line[:k]
	if block && start > 2 {
		wrote = strings.TrimLeft(line[:k], " \t")
	}
	wrote = strings.TrimRight(wrote, " \t")
	offset := 0
	if block && start > 2 {
		offset = start + skipBlanks(line, 0)
	}
	return Lookalike{
		Offset: offset,
		Wrote:  wrote,
		Why:    strings.Join(why, ", "),
		Want:   Prefix + string(kind) + tidyOptions(rest),
	}, true
}

// lockWord finds "lock" or "lockgen" at the start of a comment line (after
// blanks, a block comment's '*', an '@' or '+') and returns the offset just
// after it, with what already differs from an annotation.
func lockWord(line string, block bool) (int, []string, bool) {
	var why []string
	if block {
		why = append(why, "a /* */ comment")
	}
	i := skipBlanks(line, 0)
	if block && i < len(line) && line[i] == '*' {
		i = skipBlanks(line, i+1)
	}
	if i > 0 && !block {
		why = append(why, "a space after //")
	}
	if i < len(line) && (line[i] == '@' || line[i] == '+') {
		why = append(why, "a "+string(line[i])+" before lock")
		i++
	}
	if !hasPrefixFold(line[i:], "lock") {
		return 0, nil, false
	}
	j := i + len("lock")
	if hasPrefixFold(line[j:], "gen") {
		why = append(why, "lockgen instead of lock")
		j += len("gen")
	}
	if strings.ToLower(line[i:j]) != line[i:j] {
		why = append(why, "upper case")
	}
	return j, why, true
}

// tidyOptions writes the options part of a suggested annotation: single
// spaces between options, none around '='.
func tidyOptions(rest string) string {
	f := strings.Fields(rest)
	out := strings.Join(f, " ")
	for _, sp := range []string{" = ", " =", "= "} {
		out = strings.ReplaceAll(out, sp, "=")
	}
	if out == "" {
		return ""
	}
	return " " + out
}

func skipBlanks(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// kindFold matches a kind name in any case.
func kindFold(word string) (Kind, bool) {
	for _, k := range Kinds {
		if strings.EqualFold(word, string(k)) {
			return k, true
		}
	}
	return "", false
}

// hasKeyOption reports whether s holds "key" followed by '=' (spaces
// allowed), as an option would.
func hasKeyOption(s string) bool {
	for i := 0; i+3 <= len(s); i++ {
		if !strings.EqualFold(s[i:i+3], "key") || (i > 0 && isLetter(s[i-1])) {
			continue
		}
		if j := skipBlanks(s, i+3); j < len(s) && s[j] == '=' {
			return true
		}
	}
	return false
}
