package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockgen/lockgen/redistest"
	"github.com/lockgen/lockgen/runtime"
)

// The connection flags work before the subcommand and before "locks", as
// well as after the subcommand.
func TestLocksFlagsBeforeSubcommand(t *testing.T) {
	srv := redistest.Start(t)
	holding(t, srv.Client(t), "web-1:11:aa:1", runtime.Lock{Kind: runtime.Mutex, Key: "order:42", Lease: 5 * time.Second})
	url := "redis://" + srv.Addr
	t.Setenv("REDIS_URL", "redis://127.0.0.1:1") // a wrong default: the flag must be the one used
	for _, args := range [][]string{
		{"locks", "ls", "-redis", url},
		{"locks", "-redis", url, "ls"},
		{"-redis", url, "locks", "ls"},
		{"-redis=" + url, "-timeout", "5s", "locks", "ls", "order:*"},
		{"--redis", url, "locks", "--prefix", "lockgen:", "show", "mutex:order:42"},
	} {
		var out, errs bytes.Buffer
		code := dispatch(args, &out, &errs)
		if code != exitOK || !strings.Contains(out.String(), "web-1:11:aa:1") {
			t.Errorf("lockgen %s: exit %d, out %q, err %q; want the holder listed",
				strings.Join(args, " "), code, out.String(), errs.String())
		}
	}
}

func TestLocksArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string // nil: the generator's command line
	}{
		{[]string{"locks", "ls"}, []string{"ls"}},
		{[]string{"-redis", "u", "locks", "ls"}, []string{"-redis", "u", "ls"}},
		{[]string{"-json", "locks", "show", "mutex:a"}, []string{"-json", "show", "mutex:a"}},
		{[]string{"-o", "x.go", "locks"}, nil}, // the generator on a package named locks
		{[]string{"-check", "locks"}, nil},
		{[]string{"./locks"}, nil},
		{[]string{"-redis"}, nil},
		{[]string{"-h"}, nil},
	} {
		got, ok := locksArgs(tc.args)
		if ok != (tc.want != nil) || !slices.Equal(got, tc.want) {
			t.Errorf("locksArgs(%q) = %q, %v; want %q", tc.args, got, ok, tc.want)
		}
	}
	for _, tc := range []struct{ args, want []string }{
		{[]string{"-redis", "u", "ls", "x*"}, []string{"ls", "-redis", "u", "x*"}},
		{[]string{"-redis=u", "-force", "release", "mutex:a"}, []string{"release", "-redis=u", "-force", "mutex:a"}},
		{[]string{"ls", "-redis", "u"}, []string{"ls", "-redis", "u"}},
		{[]string{"-redis", "u"}, []string{"-redis", "u"}}, // no subcommand: usage
		{[]string{"-h"}, []string{"-h"}},
	} {
		if got := flagsAfterSubcommand(tc.args); !slices.Equal(got, tc.want) {
			t.Errorf("flagsAfterSubcommand(%q) = %q; want %q", tc.args, got, tc.want)
		}
	}
}

// lockgen -h names both commands.
func TestHelpListsLocks(t *testing.T) {
	var out, errs bytes.Buffer
	if code := dispatch([]string{"-h"}, &out, &errs); code != exitOK {
		t.Fatalf("lockgen -h: exit %d", code)
	}
	if help := errs.String(); !strings.Contains(help, "lockgen locks ls|show|release") || !strings.Contains(help, "-check") {
		t.Errorf("lockgen -h does not list the locks command and the generator's flags:\n%s", help)
	}
}
