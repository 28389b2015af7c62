package templates

import (
	"strconv"
	"strings"
	"time"

	"github.com/dave/jennifer/jen"
)

// The doc comments of generated declarations say what the //lock: lines of
// the wrapped methods say, so that `go doc` and a reviewer reading
// lock_gen.go see which lock a call takes without opening the source.

// docWidth is where docComment wraps paragraph lines.
const docWidth = 76

// docComment renders lines as one `//` comment block: an empty line becomes
// a bare `//`, a list item ("  - ...") stays on its line, any other line is
// a paragraph line wrapped at docWidth. go/format later normalises lists.
func docComment(lines ...string) jen.Code {
	var out []string
	for _, l := range lines {
		switch {
		case l == "":
			out = append(out, "//")
		case strings.HasPrefix(l, "  - "):
			out = append(out, "// "+l)
		default:
			for _, w := range wrapWords(l, docWidth) {
				out = append(out, "// "+w)
			}
		}
	}
	return jen.Comment(strings.Join(out, "\n"))
}

// wrapWords breaks text at spaces into lines of at most width bytes (a
// longer word gets a line of its own).
func wrapWords(text string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(text) {
		switch {
		case line == "":
			line = w
		case len(line)+1+len(w) > width:
			lines = append(lines, line)
			line = w
		default:
			line += " " + w
		}
	}
	return append(lines, line)
}

// methodRef names the wrapped method as a doc link, e.g. [Orders.Pay].
func methodRef(wr *Wrapper, m *Method) string {
	return "[" + wr.TypeName + "." + m.Name + "]"
}

// lockedMethodDoc says which locks m takes, with their options, and what
// happens when they are busy.
func lockedMethodDoc(wr *Wrapper, m *Method) jen.Code {
	locks := m.Locked.Locks
	several := len(locks) > 1 || sliceValue(&locks[0]) != nil
	noRenew := false
	var lines, more []string
	if len(locks) == 1 {
		more = append(more, m.Name+" takes the "+lockPhrase(&locks[0])+" ("+lockOptions(&locks[0])+"), then calls "+methodRef(wr, m)+".")
	} else {
		lines = append(lines, m.Name+" takes these locks, all or nothing, then calls "+methodRef(wr, m)+":")
		for i := range locks {
			lines = append(lines, "  - "+lockPhrase(&locks[i])+" ("+lockOptions(&locks[i])+")")
		}
		lines = append(lines, "")
	}
	for i := range locks {
		noRenew = noRenew || locks[i].NoRenew
	}
	if noRenew {
		more = append(more, "Without renewal, the context "+methodRef(wr, m)+" gets ends before the lease does.")
	}
	switch {
	case m.Locked.OnBusySkip && several:
		more = append(more, "If a lock is busy, "+m.Name+" returns zero values and a nil error without calling it; a caller learns of the skip with [runtime.TrackSkips].")
	case m.Locked.OnBusySkip:
		more = append(more, "If the lock is busy, "+m.Name+" returns zero values and a nil error without calling it; a caller learns of the skip with [runtime.TrackSkips].")
	case several:
		more = append(more, "If it does not get every lock, "+m.Name+" returns the error without calling it; a busy lock gives an error wrapping [runtime.ErrNotAcquired].")
	default:
		more = append(more, "If it does not get the lock, "+m.Name+" returns the error without calling it; a busy lock gives an error wrapping [runtime.ErrNotAcquired].")
	}
	lines = append(lines, strings.Join(more, " "))
	return docComment(lines...)
}

// delegateMethodDoc says that m takes no lock.
func delegateMethodDoc(wr *Wrapper, m *Method) jen.Code {
	return docComment(m.Name + " delegates to " + methodRef(wr, m) + " without a lock.")
}

// lockPhrase is the kind and the key template, e.g. "fair lock order:<id>".
func lockPhrase(l *Lock) string {
	kind := l.Kind + " lock"
	if l.Kind == "mutex" || l.Kind == "semaphore" {
		kind = l.Kind
	}
	return kind + " " + l.Template
}

// lockOptions spells out every option of l, defaults included.
func lockOptions(l *Lock) string {
	var opts []string
	if v := sliceValue(l); v != nil {
		opts = append(opts, "one key per element of "+v.Source+", all or nothing")
	}
	if l.Kind == "semaphore" {
		opts = append(opts, strconv.Itoa(l.Permits)+" permits")
	}
	if l.Lease > 0 {
		opts = append(opts, "lease "+durationText(l.Lease))
	} else {
		opts = append(opts, "default lease")
	}
	if l.NoRenew {
		opts = append(opts, "not renewed")
	} else {
		opts = append(opts, "renewed")
	}
	switch {
	case !l.HasWait:
		opts = append(opts, "waits until ctx is done")
	case l.Wait == 0:
		opts = append(opts, "tries once")
	default:
		opts = append(opts, "waits at most "+durationText(l.Wait))
	}
	return strings.Join(opts, ", ")
}

// durationText is d as the annotation would write it: 1m30s rather than
// 1m30s0ms, 250ms rather than 0.25s.
func durationText(d time.Duration) string {
	s := d.String()
	for _, zero := range []string{"m0s", "h0m"} {
		if strings.HasSuffix(s, zero) {
			s = strings.TrimSuffix(s, zero[1:])
		}
	}
	return s
}

// wrapperDoc is the doc comment of the wrapper type: what it wraps and a
// summary of the locks, one line per annotated method.
func wrapperDoc(wr *Wrapper) jen.Code {
	what := "*" + wr.TypeName
	if wr.Interface {
		what = "a " + wr.TypeName
	}
	lines := []string{
		wr.Name() + " wraps " + what + ": annotated methods run under their locks, the others delegate without one. " +
			"The wrapped methods get the lock holder's context, which is cancelled if a lock is lost.",
		"",
		"Locks by method:",
	}
	for i := range wr.Methods {
		m := &wr.Methods[i]
		if m.Locked == nil {
			continue
		}
		phrases := make([]string, len(m.Locked.Locks))
		for j := range m.Locked.Locks {
			phrases[j] = lockPhrase(&m.Locked.Locks[j])
		}
		lines = append(lines, "  - "+m.Name+": "+strings.Join(phrases, ", "))
	}
	return docComment(lines...)
}
