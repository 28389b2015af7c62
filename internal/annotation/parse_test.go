package annotation

import (
	"strings"
	"testing"
	"time"
)

func TestParseValid(t *testing.T) {
	a, errs := Parse("//lock:semaphore key=jobs:<tenant.ID>:<req.Shard().Name> key=all lease=10s renew=false wait=0 permits=3 onbusy=skip")
	if len(errs) != 0 {
		t.Fatalf("unexpected errors: %v", errs)
	}
	if a.Kind != Semaphore || a.KindOffset != len(Prefix) {
		t.Errorf("kind = %q at %d", a.Kind, a.KindOffset)
	}
	if a.Lease != 10*time.Second || a.Renew || !a.HasWait || a.Wait != 0 || a.Permits != 3 || a.OnBusy != OnBusySkip {
		t.Errorf("options parsed wrong: %+v", a)
	}
	if len(a.Keys) != 2 {
		t.Fatalf("got %d keys, want 2", len(a.Keys))
	}
	k := a.Keys[0]
	if len(k.Parts) != 4 {
		t.Fatalf("parts = %+v", k.Parts)
	}
	if k.Parts[0].Literal != "jobs:" || k.Parts[2].Literal != ":" {
		t.Errorf("literals = %q %q", k.Parts[0].Literal, k.Parts[2].Literal)
	}
	ph := k.Parts[3].Placeholder
	if ph == nil || ph.Root != "req" || len(ph.Selectors) != 2 ||
		ph.Selectors[0] != (Selector{Name: "Shard", Call: true, Offset: k.Parts[3].Offset + 5}) ||
		ph.Selectors[1].Name != "Name" || ph.Selectors[1].Call {
		t.Errorf("placeholder = %+v", ph)
	}
	if a.Keys[1].Parts[0].Literal != "all" || a.Keys[1].Parts[0].Placeholder != nil {
		t.Errorf("constant key = %+v", a.Keys[1])
	}
}

func TestParseDefaults(t *testing.T) {
	a, errs := Parse("//lock:mutex key=order:<id>")
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	if a.Lease != 0 || !a.Renew || a.HasWait || a.OnBusy != OnBusyError || a.OnBusyOffset != -1 {
		t.Errorf("defaults wrong: %+v", a)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		text string
		at   string // the text at the expected offset
		msg  string // substring of the message
	}{
		{"//lock:spin key=a", "spin", `unknown kind "spin"; want one of mutex, fair, read, write, semaphore`},
		{"//lock:mutx key=a", "mutx", `unknown kind "mutx"; did you mean mutex? (want one of mutex, fair, read, write, semaphore)`},
		{"//lock:mutex keys=a", "keys", `unknown option "keys"; did you mean key=? (want one of key, lease, renew, wait, permits, onbusy, order)`},
		{"//lock:mutex key=a ordr=ignore", "ordr=ignore", `unknown option "ordr"; did you mean order=? (want one of key, lease, renew, wait, permits, onbusy, order)`},
		{"//lock:mutex key=a color=red", "color=red", `unknown option "color"; want one of key, lease, renew, wait, permits, onbusy, order`},
		{"//lock:mutex key=a lease=10", "10", `bad lease duration "10"`},
		{"//lock:mutex key=a lease=0s", "0s", "lease must be at least 1ms"},
		{"//lock:mutex key=a wait=-1s", "-1s", "wait must not be negative"},
		{"//lock:mutex lease=1s", "mutex", "missing key=<template>"},
		{"//lock:mutex key=a permits=2", "permits=2", "permits is only valid on semaphore, not on mutex"},
		{"//lock:semaphore key=a", "semaphore", "semaphore needs permits"},
		{"//lock:semaphore key=a permits=0", "0", "permits must be at least 1"},
		{"//lock:semaphore key=a permits=x", "x", `bad permits value "x"; want an integer from 1 to 2147483647`},
		{"//lock:semaphore key=a permits=2147483648", "2147483648", `bad permits value "2147483648"`},
		{"//lock:mutex key=a lease=1000h", "1000h", "lease must be at most"},
		{"//lock:mutex key=a renew=false renew=true", "renew=true", "duplicate option renew"},
		{"//lock:mutex key=a lease=1s lease=2s", "lease=2s", "duplicate option lease"},
		{"//lock:mutex key=a renew=yes", "yes", `bad renew value "yes"`},
		{"//lock:mutex key=a onbusy=wait", "wait", `bad onbusy value "wait"; want error or skip`},
		{"//lock:mutex key=a order=off", "off", `bad order value "off"; want check or ignore`},
		{"//lock:mutex key=a order=ignore order=check", "order=check", "duplicate option order"},
		{"//lock:mutex key=a:<id", "<id", "unclosed '<'"},
		{"//lock:mutex key=a:id>", ">", "unmatched '>'"},
		{"//lock:mutex key=a{<id>}", "{", "'{' is not allowed"},
		{"//lock:mutex key=<a><b>", "<b>", "must be separated by literal text"},
		{"//lock:mutex key=<a>x_<b>", "<b>", "must be separated by literal text"},
		{"//lock:mutex key=a:<>", "<>", "empty placeholder"},
		{"//lock:mutex key=a:<x..y>", ".y>", "want an identifier"},
		{"//lock:mutex key=a:<f()>", "()", "must start with a parameter name"},
		{"//lock:mutex key=a:<x.f(1)>", "(1)", "unexpected '('"},
		{"//lock:mutex key=a:<1x>", "1x", "want an identifier"},
		{"//lock:mutex key=", "key=", "empty value for option key"},
		{"//lock:mutex key=a stray", "stray", `expected option=value, got "stray"`},
		{"//lock:", "//lock:", "missing lock kind"},
		{"//lock: mutex key=a", "//lock:", "missing lock kind"},
		{"//lock:mutex key = a:<id>", "key", "no spaces around '=' in an option; write key=a:<id>"},
		{"//lock:mutex key= a:<id>", "key", "write key=a:<id>"},
		{"//lock:mutex key=a wait =1s", "wait", "write wait=1s"},
		{"//lock:mutex key:a:<id>", "key:", `got "key:a:<id>"; write key=a:<id>`},
		{`//lock:mutex key="a:<id>"`, `"a`, "written without quotes, which would become part of the value; write key=a:<id>"},
		{"//lock:mutex key='a'", "'a'", "write key=a"},
		{`//lock:mutex key="a b"`, `"a b"`, "cannot contain spaces"},
		{`//lock:mutex key=order:"<id>"`, `"<id>"`, `'"' is not allowed in a key template`},
		{`//lock:mutex key=a lease="1s"`, `"1s"`, "write lease=1s"},
	}
	for _, tt := range tests {
		_, errs := Parse(tt.text)
		if len(errs) == 0 {
			t.Errorf("%s: no error, want %q", tt.text, tt.msg)
			continue
		}
		found := false
		for _, e := range errs {
			if strings.Contains(e.Msg, tt.msg) && strings.HasPrefix(tt.text[e.Offset:], tt.at) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: got %v, want %q at %q", tt.text, errs, tt.msg, tt.at)
		}
	}
}

func TestParseReportsEveryProblem(t *testing.T) {
	_, errs := Parse("//lock:mutex key=a:<x><y> lease=soon wait=forever bogus=1")
	if len(errs) != 4 {
		t.Fatalf("got %d errors, want 4: %v", len(errs), errs)
	}
}

// Each mistake read as meant gets one message, and the option still counts
// (no "missing key" after a spaced or quoted key).
func TestParseOneMessagePerMistake(t *testing.T) {
	for _, text := range []string{
		"//lock:mutex key = a:<id>",
		"//lock:mutex key =a:<id>",
		"//lock:mutex key= a:<id>",
		"//lock:mutex key:a:<id>",
		`//lock:mutex key="a:<id>"`,
		`//lock:mutex key="a b c"`,
		`//lock:mutex key=order:"<id>"`,
		`//lock:semaphore key=a permits="2"`,
		"//lock:semaphore key=a permit=2",
		"//lock:mutex keys=a:<id>",
		"//lock:mutex key=a lease=1s leas=2s",
		"//lock:semaphor key=a permits=2",
		"//lock:mutex key=a ordr=ignore",
		`//lock:mutex key=a order="ignore"`,
	} {
		if _, errs := Parse(text); len(errs) != 1 {
			t.Errorf("%s: %d errors, want 1: %v", text, len(errs), errs)
		}
	}
	a, _ := Parse("//lock:mutex key = a:<id> wait= 1s")
	if len(a.Keys) != 1 || a.Keys[0].Source != "a:<id>" || !a.HasWait || a.Wait != time.Second {
		t.Errorf("spaced options not read as meant: %+v", a)
	}
}

func TestParseNiladicWithoutParens(t *testing.T) {
	a, errs := Parse("//lock:mutex key=<req.Shard>:<req.Tenant().ID>")
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	sels := a.Keys[0].Parts[0].Placeholder.Selectors
	if len(sels) != 1 || sels[0].Name != "Shard" || sels[0].Call {
		t.Errorf("selectors = %+v (Call is only set when () is written; go/types decides)", sels)
	}
}

func TestParseOrderOption(t *testing.T) {
	for text, ignore := range map[string]bool{
		"//lock:mutex key=a":              false,
		"//lock:mutex key=a order=check":  false,
		"//lock:mutex key=a order=ignore": true,
	} {
		a, errs := Parse(text)
		if len(errs) != 0 {
			t.Errorf("%s: %v", text, errs)
			continue
		}
		if a.OrderIgnore != ignore {
			t.Errorf("%s: OrderIgnore = %v, want %v", text, a.OrderIgnore, ignore)
		}
	}
}
