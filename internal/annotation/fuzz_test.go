package annotation

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"//lock:mutex key=order:<id>",
		"//lock:fair key=a:<req.Tenant().ID>:b:<req.OrderID> lease=10s wait=0 renew=false",
		"//lock:semaphore key=jobs permits=3 onbusy=skip",
		"//lock:read key=<a>-<b>",
		"//lock:write key={x} key=<",
		"//lock:",
		"//lock:mutex key=<a.b().c()> lease=1h wait=1ms lease=2s",
		"//lock:spin key=a permits=-1 onbusy=x color=",
		"//lock:mutex\tkey=a\x00<é.ü()>",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		a, errs := Parse(text)
		for _, e := range errs {
			if e.Msg == "" {
				t.Fatalf("empty message for %q", text)
			}
			if e.Offset < 0 || (len(text) > 0 && e.Offset >= len(text)) || (len(text) == 0 && e.Offset != 0) {
				t.Fatalf("offset %d outside %q: %s", e.Offset, text, e.Msg)
			}
		}
		if len(errs) > 0 {
			return
		}
		// Accepted: the result must be self-consistent.
		if !validKind(a.Kind) || len(a.Keys) == 0 {
			t.Fatalf("accepted %q with kind %q and %d keys", text, a.Kind, len(a.Keys))
		}
		if (a.Kind == Semaphore) != (a.Permits >= 1) {
			t.Fatalf("accepted %q: kind %s with permits %d", text, a.Kind, a.Permits)
		}
		for _, k := range a.Keys {
			if !strings.HasPrefix(text[k.Offset:], k.Source) {
				t.Fatalf("template offset %d does not point at %q in %q", k.Offset, k.Source, text)
			}
			var rebuilt strings.Builder
			var prevPH bool
			for _, p := range k.Parts {
				if p.Placeholder == nil {
					if strings.ContainsAny(p.Literal, "{}<> \t") {
						t.Fatalf("accepted literal %q in %q", p.Literal, text)
					}
					rebuilt.WriteString(p.Literal)
					prevPH = false
					continue
				}
				if prevPH {
					t.Fatalf("accepted adjacent placeholders in %q", text)
				}
				prevPH = true
				rebuilt.WriteString("<" + p.Placeholder.Source + ">")
				if !utf8.ValidString(p.Placeholder.Root) || p.Placeholder.Root == "" {
					t.Fatalf("bad root %q", p.Placeholder.Root)
				}
			}
			if rebuilt.String() != k.Source {
				t.Fatalf("parts rebuild %q, source %q", rebuilt.String(), k.Source)
			}
		}
	})
}
