package lockotel_test

import (
	"fmt"
	"strings"
	"unicode"
)

// A small reader of the PromQL the dashboard uses, enough to list every
// metric and label name a query mentions: selectors, grouping clauses
// (by, without, on, ignoring, group_left, group_right) and Grafana's
// label_values(selector, label). It is not a full PromQL parser (that
// would pull the Prometheus server module into this one); what it does
// not understand it reports, so a query it cannot read fails the test
// rather than passing unchecked.

// queryRefs is what one query names.
type queryRefs struct {
	selectors []selectorRef // metric{label op value, ...}
	grouping  []string      // labels of by/without/on/ignoring/group_x and label_values
	problems  []string      // what the reader could not make sense of
}

type selectorRef struct {
	metric string
	labels []string
}

// promFunctions are the functions and aggregations a dashboard query may
// call; an unknown one is reported (a typo there is as broken as in a
// metric name).
var promFunctions = map[string]bool{
	"sum": true, "avg": true, "max": true, "min": true, "count": true, "topk": true, "bottomk": true,
	"rate": true, "irate": true, "increase": true, "histogram_quantile": true, "clamp_min": true,
	"label_values": true, "vector": true, "absent": true,
}

// groupingWords take a parenthesised list of label names.
var groupingWords = map[string]bool{"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true}

// operatorWords are the other PromQL keywords, which name nothing.
var operatorWords = map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "offset": true}

type token struct {
	kind byte // 'i' identifier, 's' string, 'n' number, 'p' punctuation
	text string
}

// tokenize splits a query into tokens. Range selectors ([5m],
// [$__rate_interval]) and Grafana variables outside strings are dropped:
// they name no metric or label.
func tokenize(q string) ([]token, error) {
	var toks []token
	for i := 0; i < len(q); {
		c := rune(q[i])
		switch {
		case unicode.IsSpace(c):
			i++
		case c == '[':
			end := strings.IndexByte(q[i:], ']')
			if end < 0 {
				return nil, fmt.Errorf("unclosed [ at %d", i)
			}
			i += end + 1
		case c == '"' || c == '\'' || c == '`':
			end := closingQuote(q, i)
			if end < 0 {
				return nil, fmt.Errorf("unclosed string at %d", i)
			}
			toks = append(toks, token{'s', q[i : end+1]})
			i = end + 1
		case c == '$':
			i = skipVariable(q, i)
		case c == '_' || c == ':' || unicode.IsLetter(c):
			j := i + 1
			for j < len(q) && (q[j] == '_' || q[j] == ':' || unicode.IsLetter(rune(q[j])) || unicode.IsDigit(rune(q[j]))) {
				j++
			}
			toks = append(toks, token{'i', q[i:j]})
			i = j
		case unicode.IsDigit(c) || c == '.':
			j := i + 1
			for j < len(q) && (unicode.IsDigit(rune(q[j])) || q[j] == '.' || q[j] == 'e') {
				j++
			}
			toks = append(toks, token{'n', q[i:j]})
			i = j
		default:
			j := i + 1
			if j < len(q) && strings.ContainsRune("=~", rune(q[j])) && strings.ContainsRune("=!~<>", c) {
				j++
			}
			toks = append(toks, token{'p', q[i:j]})
			i = j
		}
	}
	return toks, nil
}

// closingQuote returns the index of the quote that ends the string
// starting at q[start], skipping escaped characters.
func closingQuote(q string, start int) int {
	for i := start + 1; i < len(q); i++ {
		switch q[i] {
		case '\\':
			i++
		case q[start]:
			return i
		}
	}
	return -1
}

// skipVariable returns the index just after a Grafana variable, $name or
// ${name}.
func skipVariable(q string, i int) int {
	if strings.HasPrefix(q[i:], "${") {
		if end := strings.IndexByte(q[i:], '}'); end > 0 {
			return i + end + 1
		}
		return len(q)
	}
	j := i + 1
	for j < len(q) && (q[j] == '_' || unicode.IsLetter(rune(q[j])) || unicode.IsDigit(rune(q[j]))) {
		j++
	}
	return j
}

// readQuery lists the metrics and labels query names.
func readQuery(query string) queryRefs {
	var refs queryRefs
	toks, err := tokenize(query)
	if err != nil {
		refs.problems = append(refs.problems, err.Error())
		return refs
	}
	labelAt := -1 // label_values's label, not a metric
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if i == labelAt {
			continue
		}
		next := ""
		if i+1 < len(toks) {
			next = toks[i+1].text
		}
		switch {
		case t.kind == 'p' && t.text == "{":
			refs.problems = append(refs.problems, "a selector without a metric name")
			_, i = readMatchers(toks, i, &refs)
		case t.kind != 'i':
		case groupingWords[t.text] && next == "(":
			i = readLabelList(toks, i+1, &refs)
		case t.text == "label_values" && next == "(":
			var label string
			label, labelAt = lastArgument(toks, i+1, &refs)
			refs.grouping = append(refs.grouping, label)
		case promFunctions[t.text]: // sum(...), or sum by (...) (...)
		case next == "(":
			refs.problems = append(refs.problems, "unknown function "+t.text)
		case groupingWords[t.text] || operatorWords[t.text]:
		case next == "{":
			sel := selectorRef{metric: t.text}
			sel.labels, i = readMatchers(toks, i+1, &refs)
			refs.selectors = append(refs.selectors, sel)
		default:
			refs.selectors = append(refs.selectors, selectorRef{metric: t.text})
		}
	}
	return refs
}

// readMatchers reads label op "value" pairs from the "{" at toks[open]
// and returns their labels and the index of the closing "}".
func readMatchers(toks []token, open int, refs *queryRefs) ([]string, int) {
	var labels []string
	i := open + 1
	for i < len(toks) && toks[i].text != "}" {
		if i+2 >= len(toks) || toks[i].kind != 'i' || toks[i+1].kind != 'p' || toks[i+2].kind != 's' {
			refs.problems = append(refs.problems, "a matcher that is not label op \"value\"")
			return labels, len(toks)
		}
		labels = append(labels, toks[i].text)
		i += 3
		if i < len(toks) && toks[i].text == "," {
			i++
		}
	}
	return labels, i
}

// readLabelList reads the labels of a grouping clause from the "(" at
// toks[open] and returns the index of the closing ")".
func readLabelList(toks []token, open int, refs *queryRefs) int {
	i := open + 1
	for ; i < len(toks) && toks[i].text != ")"; i++ {
		switch toks[i].kind {
		case 'i':
			refs.grouping = append(refs.grouping, toks[i].text)
		case 'p':
			if toks[i].text != "," {
				refs.problems = append(refs.problems, "a grouping clause with "+toks[i].text)
			}
		}
	}
	return i
}

// lastArgument returns the final argument of the call whose "(" is at
// toks[open], and its index: label_values(selector, label) names its
// label there.
func lastArgument(toks []token, open int, refs *queryRefs) (string, int) {
	depth := 0
	for i := open; i < len(toks); i++ {
		switch toks[i].text {
		case "(":
			depth++
		case ")":
			depth--
			if depth == 0 {
				if i-2 > open && toks[i-1].kind == 'i' && toks[i-2].text == "," {
					return toks[i-1].text, i - 1
				}
				refs.problems = append(refs.problems, "label_values without a label")
				return "", -1
			}
		}
	}
	refs.problems = append(refs.problems, "unclosed (")
	return "", -1
}
