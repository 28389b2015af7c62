package annotation

import (
	"strconv"
	"unicode"
	"unicode/utf8"
)

// parseTemplate parses a key template that starts at offset in the comment.
// It reports every problem it finds and returns ok only when there were none.
func (p *parser) parseTemplate(src string, offset int) (Template, bool) {
	before := len(p.errs)
	t := Template{Source: src, Offset: offset}
	var lastPlaceholder *Placeholder
	quoted := false
	literalStart := 0
	flushLiteral := func(end int) {
		if end > literalStart {
			t.Parts = append(t.Parts, Part{Offset: offset + literalStart, Literal: src[literalStart:end]})
		}
	}
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == '<':
			end := indexByteFrom(src, '>', i+1)
			if end < 0 {
				p.errorf(offset+i, "unclosed '<' in key template "+strconv.Quote(src))
				return t, false
			}
			flushLiteral(i)
			if lastPlaceholder != nil && !hasSeparator(src[literalStart:i]) {
				p.errorf(offset+i, "placeholders <"+lastPlaceholder.Source+"> and <"+src[i+1:end]+
					"> must be separated by literal text with a byte other than A-Z a-z 0-9 - _ . ~ (such as ':'), or two different values could render the same key")
			}
			ph, ok := p.parsePlaceholder(src[i+1:end], offset+i)
			if ok {
				t.Parts = append(t.Parts, Part{Offset: offset + i, Placeholder: ph})
				lastPlaceholder = ph
			}
			i = end + 1
			literalStart = i
		case c == '>':
			p.errorf(offset+i, "unmatched '>' in key template "+strconv.Quote(src))
			i++
		case c == '{' || c == '}':
			p.errorf(offset+i, "'"+string(c)+"' is not allowed in a key template: braces mark the Redis Cluster hash tag, which lockgen puts around the whole key")
			i++
		case c == '"' || c == '\'' || c == '`':
			if !quoted { // one message for all the quotes of a template
				p.errorf(offset+i, strconv.QuoteRune(rune(c))+" is not allowed in a key template: keys are written without quotes, such as key=order:<id>")
			}
			quoted = true
			i++
		case c < 0x20 || c == 0x7f:
			p.errorf(offset+i, "control byte "+strconv.QuoteRune(rune(c))+" is not allowed in a key template")
			i++
		default:
			i++
		}
	}
	flushLiteral(len(src))
	return t, len(p.errs) == before
}

// parsePlaceholder parses the text between '<' and '>' (lt is the offset of '<').
func (p *parser) parsePlaceholder(src string, lt int) (*Placeholder, bool) {
	ph := &Placeholder{Source: src, Offset: lt}
	if src == "" {
		p.errorf(lt, "empty placeholder <>; want <param> or <param.Field> or <param.Method()>")
		return nil, false
	}
	pos := 0 // offset inside src
	for seg := 0; ; seg++ {
		start := pos
		for pos < len(src) {
			r, size := utf8.DecodeRuneInString(src[pos:])
			if !(r == '_' || unicode.IsLetter(r) || (pos > start && unicode.IsDigit(r))) {
				break
			}
			pos += size
		}
		if pos == start {
			p.errorf(lt+1+pos, "bad placeholder <"+src+">: want an identifier at "+describeAt(src, pos))
			return nil, false
		}
		name := src[start:pos]
		call := false
		if pos+1 < len(src) && src[pos] == '(' && src[pos+1] == ')' {
			if seg == 0 {
				p.errorf(lt+1+pos, "bad placeholder <"+src+">: it must start with a parameter name, not a call")
				return nil, false
			}
			call = true
			pos += 2
		}
		if seg == 0 {
			ph.Root = name
		} else {
			ph.Selectors = append(ph.Selectors, Selector{Name: name, Call: call, Offset: lt + 1 + start})
		}
		if pos == len(src) {
			return ph, true
		}
		if src[pos] != '.' {
			p.errorf(lt+1+pos, "bad placeholder <"+src+">: unexpected "+describeAt(src, pos)+"; want '.' followed by a field or a method()")
			return nil, false
		}
		pos++
	}
}

func describeAt(s string, i int) string {
	if i >= len(s) {
		return "end of placeholder"
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return strconv.QuoteRune(r)
}

func indexByteFrom(s string, c byte, from int) int {
	for i := from; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

// hasSeparator reports whether literal text contains a byte that escaped
// values never contain unencoded (anything outside A-Z a-z 0-9 - _ . ~ and
// '%'): the first such byte after a value marks where the value ends.
func hasSeparator(lit string) bool {
	for i := 0; i < len(lit); i++ {
		if !unreserved(lit[i]) && lit[i] != '%' {
			return true
		}
	}
	return false
}

func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '_' || c == '.' || c == '~'
}
