package annotation

import (
	"strconv"
	"strings"
)

// options is what the option loop remembers across tokens.
type options struct {
	seen          map[string]bool
	permitsOffset int
}

// opt is one name=value option, possibly assembled from several tokens.
type opt struct {
	name        string
	value       string
	offset      int // of the name
	valueOffset int
	diagnosed   bool // the value was refused: count the option as given, check nothing else
}

// option reads the option that starts at toks[0] and returns it with the
// number of tokens it used. A name of "" means the tokens were diagnosed and
// must be skipped.
//
// Two mistakes are read the way they were meant, with one diagnostic each
// instead of a cascade: spaces around '=' ("key = a:<id>", "key= a",
// "key =a"), and a quoted value ("key=\"a:<id>\"", even one that spans
// several tokens).
func (p *parser) option(toks []field) (opt, int) {
	f := toks[0]
	name, value, ok := strings.Cut(f.text, "=")
	o := opt{name: name, value: value, offset: f.offset, valueOffset: f.offset + len(name) + 1}
	used := 1
	switch {
	case !ok && len(toks) > 1 && strings.HasPrefix(toks[1].text, "="):
		// "key =a" or "key = a"
		o.value, o.valueOffset, used = toks[1].text[1:], toks[1].offset+1, 2
		if o.value == "" && len(toks) > 2 && !strings.Contains(toks[2].text, "=") {
			o.value, o.valueOffset, used = toks[2].text, toks[2].offset, 3
		}
		p.spacedOption(o)
	case ok && value == "" && len(toks) > 1 && !strings.Contains(toks[1].text, "="):
		// "key= a"
		o.value, o.valueOffset, used = toks[1].text, toks[1].offset, 2
		p.spacedOption(o)
	case !ok:
		n, v, colon := strings.Cut(f.text, ":")
		if !colon || !validOption(n) || v == "" {
			p.errorf(f.offset, "expected option=value, got "+strconv.Quote(f.text))
			return opt{}, 1
		}
		// "key:a:<id>"
		p.errorf(f.offset, "expected option=value, got "+strconv.Quote(f.text)+"; write "+n+"="+v)
		o = opt{name: n, value: v, offset: f.offset, valueOffset: f.offset + len(n) + 1}
	}
	if !validOption(o.name) {
		msg := "unknown option " + strconv.Quote(o.name) + "; want one of " + strings.Join(optionNames, ", ")
		near, ok := closest(o.name, optionNames)
		if !ok {
			p.errorf(o.offset, msg)
			return opt{}, used
		}
		// A typo of a real option: count that option as given, so that a
		// misspelled key= or permits= is one message, not two.
		p.errorf(o.offset, "unknown option "+strconv.Quote(o.name)+"; did you mean "+near+"=? (want one of "+strings.Join(optionNames, ", ")+")")
		return opt{name: near, offset: o.offset, diagnosed: true}, used
	}
	if q := quoteOf(o.value); q != 0 {
		// Take every token up to the closing quote, so that a quoted value
		// with spaces in it is one mistake, not several.
		for !closedBy(o.value, q) && used < len(toks) {
			o.value += " " + toks[used].text
			used++
		}
		unquoted := strings.Trim(o.value, string(q))
		msg := "option values are written without quotes, which would become part of the value; write " + o.name + "=" + unquoted
		if strings.ContainsAny(unquoted, " \t") {
			msg = "option values are written without quotes, and cannot contain spaces; write " + o.name + "=<value without spaces>"
		}
		p.errorf(o.valueOffset, msg)
		o.diagnosed = true
	}
	return o, used
}

func (p *parser) spacedOption(o opt) {
	p.errorf(o.offset, "no spaces around '=' in an option; write "+o.name+"="+o.value)
}

// quoteOf returns the quote character a value starts with, or 0.
func quoteOf(value string) byte {
	if value != "" && strings.IndexByte("\"'`", value[0]) >= 0 {
		return value[0]
	}
	return 0
}

func closedBy(value string, q byte) bool {
	return len(value) >= 2 && value[len(value)-1] == q
}

// apply checks one option's value and records it in a.
func (p *parser) apply(a *Annotation, o *options, op opt) {
	name := op.name
	if op.diagnosed {
		// Already reported (a typo of the name, a quoted value): the
		// option counts as given, and nothing more is said about it.
		o.seen[name] = true
		return
	}
	if name != "key" && o.seen[name] {
		p.errorf(op.offset, "duplicate option "+name)
		return
	}
	o.seen[name] = true
	if name == "permits" {
		o.permitsOffset = op.offset
	}
	if op.value == "" {
		p.errorf(op.offset, "empty value for option "+name)
		return
	}
	switch name {
	case "key":
		if t, ok := p.parseTemplate(op.value, op.valueOffset); ok {
			a.Keys = append(a.Keys, t)
		}
	case "lease", "wait":
		p.setDuration(a, op)
	case "permits":
		p.setPermits(a, op)
	case "renew", "onbusy", "order":
		p.setChoice(a, op)
	}
}

// setDuration sets lease or wait: a Go duration within the option's
// bounds (a lease Redis can hold, a wait that is not negative).
func (p *parser) setDuration(a *Annotation, op opt) {
	value, at := op.value, op.valueOffset
	d, ok := p.parseDuration(op.name, value, at)
	switch {
	case !ok:
	case op.name == "wait" && d < 0:
		p.errorf(at, "wait must not be negative, got "+value+" (wait=0 tries once)")
	case op.name == "wait":
		a.Wait, a.HasWait = d, true
	case d < MinLease:
		p.errorf(at, "lease must be at least "+MinLease.String()+", got "+value)
	case d > MaxLease:
		p.errorf(at, "lease must be at most "+MaxLease.String()+", got "+value)
	default:
		a.Lease = d
	}
}

// setPermits sets permits: an integer the scripts take (1..2^31-1).
func (p *parser) setPermits(a *Annotation, op opt) {
	value, at := op.value, op.valueOffset
	n, err := strconv.ParseInt(value, 10, 32)
	switch {
	case err != nil:
		p.errorf(at, "bad permits value "+strconv.Quote(value)+"; want an integer from 1 to 2147483647")
	case n < 1:
		p.errorf(at, "permits must be at least 1, got "+value)
	default:
		a.Permits = int(n)
	}
}

// setChoice sets renew, onbusy or order: each takes one of two words.
func (p *parser) setChoice(a *Annotation, op opt) {
	value, at := op.value, op.valueOffset
	bad := func(want string) {
		p.errorf(at, "bad "+op.name+" value "+strconv.Quote(value)+"; want "+want)
	}
	switch op.name {
	case "renew":
		switch value {
		case "true", "false":
			a.Renew = value == "true"
		default:
			bad("true or false")
		}
	case "onbusy":
		a.OnBusyOffset = op.offset
		switch OnBusy(value) {
		case OnBusyError, OnBusySkip:
			a.OnBusy = OnBusy(value)
		default:
			bad("error or skip")
		}
	case "order":
		switch value {
		case "check":
		case "ignore":
			a.OrderIgnore = true
		default:
			bad("check or ignore")
		}
	}
}
