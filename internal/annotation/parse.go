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
		msg := "unknown kind " + strconv.Quote(kindTok.text) + "; want one of " + kindList()
		if near, ok := closest(kindTok.text, kindNames()); ok {
			msg = "unknown kind " + strconv.Quote(kindTok.text) + "; did you mean " + near + "? (want one of " + kindList() + ")"
		}
		p.errorf(kindTok.offset, msg)
	} else {
		a.Kind = Kind(kindTok.text)
	}

	o := &options{seen: make(map[string]bool), permitsOffset: -1}
	for i := 1; i < len(toks); {
		opt, used := p.option(toks[i:])
		i += used
		if opt.name != "" {
			p.apply(a, o, opt)
		}
	}
	seen, permitsOffset := o.seen, o.permitsOffset

	if !seen["key"] {
		p.errorf(kindTok.offset, "missing key=<template>")
	}
	switch {
	case a.Kind == Semaphore && !seen["permits"]:
		p.errorf(kindTok.offset, "semaphore needs permits=<n> (n ≥ 1)")
	case a.Kind != Semaphore && a.Kind != "" && permitsOffset >= 0:
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

func kindList() string { return strings.Join(kindNames(), ", ") }

func kindNames() []string {
	names := make([]string, len(Kinds))
	for i, k := range Kinds {
		names[i] = string(k)
	}
	return names
}

func validOption(name string) bool {
	for _, v := range optionNames {
		if v == name {
			return true
		}
	}
	return false
}
