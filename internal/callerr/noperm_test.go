package callerr

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/lua"
)

// A script's ACL denial is worded differently by each server; every form
// must become ErrNoPermission naming the command on the script's line, or
// a denied acquire is retried until its wait ends (as it was on Valkey).
func TestScriptDenialOfEveryServerIsNamed(t *testing.T) {
	line := setLine(t, lua.MutexAcquire)
	for server, msg := range map[string]string{
		"redis 7.0":  "ERR The user executing the script can't run this command or subcommand script: 50be, on @user_script:" + line + ".",
		"valkey 8.0": "ERR ACL failure in script: User noset has no permissions to run the 'set' command script: 50be, on @user_script:" + line + ".",
	} {
		err := NamePermissionError(errors.New(msg), lua.MutexAcquire)
		if !errors.Is(err, ErrNoPermission) || !strings.Contains(err.Error(), "'set' at ") {
			t.Errorf("%s: %v; want ErrNoPermission naming 'set' at its line", server, err)
		}
	}
	other := errors.New("ERR Error running script (call to f_50be): @user_script:1: oops")
	if err := NamePermissionError(other, lua.MutexAcquire); errors.Is(err, ErrNoPermission) {
		t.Errorf("an ordinary script error became %v", err)
	}
}

// setLine returns the number, as text, of the first line of script that
// calls SET.
func setLine(t *testing.T, script *lua.Script) string {
	t.Helper()
	for i, l := range strings.Split(script.Source, "\n") {
		if strings.Contains(l, "redis.call('SET'") {
			return strconv.Itoa(i + 1)
		}
	}
	t.Fatal("the script calls no SET")
	return ""
}

// A NOPERM reply to a command of the client names the command, or the key
// or channel it touched outside the user's patterns.
func TestNOPERMNamesWhatWasDenied(t *testing.T) {
	for msg, want := range map[string]string{
		"NOPERM User u has no permissions to run the 'zpopmin' command":                       "'zpopmin'",
		"NOPERM No permissions to access a channel":                                           "a channel",
		"NOPERM No permissions to access a key":                                               "a key",
		"NOPERM this user has no permissions to access one of the channels used as arguments": "a channel",
	} {
		err := NamePermissionError(errors.New(msg), nil)
		if !errors.Is(err, ErrNoPermission) || !strings.Contains(err.Error(), "("+want+")") {
			t.Errorf("%q: %v; want ErrNoPermission naming %s", msg, err, want)
		}
		if again := NamePermissionError(err, nil); again != err {
			t.Errorf("a named denial was named again: %v", again)
		}
	}
}

// WithPermissionErrors names denials on the way out of every call: Eval,
// each reply of EvalBatch, EvalWait and Subscribe.
func TestWithPermissionErrorsNamesEveryCallsDenial(t *testing.T) {
	denied := errors.New("NOPERM User u has no permissions to run the 'evalsha' command")
	b := WithPermissionErrors(deniedBackend{err: denied})
	c := backend.Call{Script: lua.MutexAcquire}
	_, evalErr := b.Eval(context.Background(), c)
	_, _, waitErr := b.EvalWait(context.Background(), c, 1, time.Second)
	_, subErr := b.Subscribe(context.Background(), "ch", func(string) {})
	replies := b.EvalBatch(context.Background(), []backend.Call{c, c})
	for what, err := range map[string]error{"Eval": evalErr, "EvalWait": waitErr, "Subscribe": subErr, "EvalBatch[0]": replies[0].Err, "EvalBatch[1]": replies[1].Err} {
		if !errors.Is(err, ErrNoPermission) || !errors.Is(err, denied) {
			t.Errorf("%s: %v, want ErrNoPermission wrapping the reply", what, err)
		}
	}
}

// deniedBackend fails every call with err.
type deniedBackend struct{ err error }

func (b deniedBackend) Eval(context.Context, backend.Call) (any, error) { return nil, b.err }
func (b deniedBackend) EvalBatch(_ context.Context, calls []backend.Call) []backend.Reply {
	out := make([]backend.Reply, len(calls))
	for i := range out {
		out[i].Err = b.err
	}
	return out
}
func (b deniedBackend) EvalWait(context.Context, backend.Call, int, time.Duration) (any, int, error) {
	return nil, 0, b.err
}
func (b deniedBackend) Subscribe(context.Context, string, func(string)) (func(), error) {
	return nil, b.err
}
func (deniedBackend) PublishCommand() string { return "PUBLISH" }
func (deniedBackend) Caps() backend.Caps     { return backend.Caps{} }
func (deniedBackend) Close() error           { return nil }
