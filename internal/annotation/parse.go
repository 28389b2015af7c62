package annotation

import (
	"strconv"
	"strings"
	"time"
)

// Option names, in the order diagnostics list them.
var optionNames = []string{"key", "lease", "renew", "wait", "permits", "onbusy", "order"}

// Parse parses one annotation comment (the full text, starting with Prefix).
// It returns every problem found; when the slice is non-empty the Annotation
// is incomplete and must not be used for generation.
func Parse(text string) (*Annotation, []*Error) {
	p := &parser{text: text}
	a := p.parse()
	return a, p.errs
}

type parser struct {
	text string
	errs []*Error
}

func (p *parser) errorf(offset int, msg string) {
	p.errs = append(p.errs, &Error{Offset: offset, Msg: msg})
}

// field is one whitespace-separated token of the annotation.
type field struct {
	offset int
	text   string
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f' || c == '\n'
}

// fields splits text[from:] at whitespace, remembering offsets.
func fields(text string, from int) []field {
	var out []field
	i := from
	for i < len(text) {
		for i < len(text) && isSpace(text[i]) {
			i++
		}
		start := i
		for i < len(text) && !isSpace(text[i]) {
			i++
		}
		if i > start {
			out = append(out, field{offset: start, text: text[start:i]})
		}
	}
	return out
}

func (p *parser) parse() *Annotation {
	a := &Annotation{Renew: true, OnBusy: OnBusyError, OnBusyOffset: -1}
	if !Is(p.text) {
		p.errorf(0, "not a lockgen annotation: want "+Prefix+"<kind> key=<template> ...")
		return a
	}
	toks := fields(p.text, len(Prefix))
	if len(toks) == 0 || toks[0].offset != len(Prefix) {
		p.errorf(0, "missing lock kind after "+Prefix+"; want one of "+kindList())
		return a
	}
	kindTok := toks[0]
	a.KindOffset = kindTok.offset
	if !validKind(Kind(kindTok.text)) {
		p.errorf(kindTok.offset, "unknown kind "+strconv.Quote(kindTok.text)+"; want one of "+kindList())
	} else {
		a.Kind = Kind(kindTok.text)
	}

	seen := make(map[string]bool)
	permitsOffset := -1
	for _, f := range toks[1:] {
		name, value, ok := strings.Cut(f.text, "=")
		if !ok {
			p.errorf(f.offset, "expected option=value, got "+strconv.Quote(f.text))
			continue
		}
		if !validOption(name) {
			p.errorf(f.offset, "unknown option "+strconv.Quote(name)+"; want one of "+strings.Join(optionNames, ", "))
			continue
		}
		if name != "key" && seen[name] {
			p.errorf(f.offset, "duplicate option "+name)
			continue
		}
		seen[name] = true
		valueOffset := f.offset + len(name) + 1
		if value == "" {
			p.errorf(f.offset, "empty value for option "+name)
			continue
		}
		switch name {
		case "key":
			if t, ok := p.parseTemplate(value, valueOffset); ok {
				a.Keys = append(a.Keys, t)
			}
		case "lease":
			d, ok := p.parseDuration(name, value, valueOffset)
			switch {
			case !ok:
			case d < MinLease:
				p.errorf(valueOffset, "lease must be at least "+MinLease.String()+", got "+value)
			case d > MaxLease:
				p.errorf(valueOffset, "lease must be at most "+MaxLease.String()+", got "+value)
			default:
				a.Lease = d
			}
		case "wait":
			d, ok := p.parseDuration(name, value, valueOffset)
			switch {
			case !ok:
			case d < 0:
				p.errorf(valueOffset, "wait must not be negative, got "+value+" (wait=0 tries once)")
			default:
				a.Wait, a.HasWait = d, true
			}
		case "renew":
			switch value {
			case "true":
				a.Renew = true
			case "false":
				a.Renew = false
			default:
				p.errorf(valueOffset, "bad renew value "+strconv.Quote(value)+"; want true or false")
			}
		case "permits":
			permitsOffset = f.offset
			n, err := strconv.ParseInt(value, 10, 32)
			switch {
			case err != nil:
				p.errorf(valueOffset, "bad permits value "+strconv.Quote(value)+"; want an integer from 1 to 2147483647")
			case n < 1:
				p.errorf(valueOffset, "permits must be at least 1, got "+value)
			default:
				a.Permits = int(n)
			}
		case "onbusy":
			a.OnBusyOffset = f.offset
			switch OnBusy(value) {
			case OnBusyError, OnBusySkip:
				a.OnBusy = OnBusy(value)
			default:
				p.errorf(valueOffset, "bad onbusy value "+strconv.Quote(value)+"; want error or skip")
			}
		case "order":
			switch value {
			case "check":
			case "ignore":
				a.OrderIgnore = true
			default:
				p.errorf(valueOffset, "bad order value "+strconv.Quote(value)+"; want check or ignore")
			}
		}
	}

	if !seen["key"] {
		p.errorf(kindTok.offset, "missing key=<template>")
	}
	switch {
	case a.Kind == Semaphore && !seen["permits"]:
		p.errorf(kindTok.offset, "semaphore needs permits=<n> (n ≥ 1)")
	case a.Kind != Semaphore && a.Kind != "" && seen["permits"]:
		p.errorf(permitsOffset, "permits is only valid on semaphore, not on "+string(a.Kind))
	}
	return a
}

func (p *parser) parseDuration(name, value string, offset int) (time.Duration, bool) {
	d, err := time.ParseDuration(value)
	if err != nil {
		p.errorf(offset, "bad "+name+" duration "+strconv.Quote(value)+"; want a Go duration such as 500ms, 10s or 1m30s")
		return 0, false
	}
	return d, true
}

func validKind(k Kind) bool {
	for _, v := range Kinds {
		if v == k {
			return true
		}
	}
	return false
}

func kindList() string {
	names := make([]string, len(Kinds))
	for i, k := range Kinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

func validOption(name string) bool {
	for _, v := range optionNames {
		if v == name {
			return true
		}
	}
	return false
}
