package runtime

import (
	"errors"
	"strconv"
	"strings"
	"testing"

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
		err := namePermissionError(errors.New(msg), lua.MutexAcquire)
		if !errors.Is(err, ErrNoPermission) || !strings.Contains(err.Error(), "'set' at ") {
			t.Errorf("%s: %v; want ErrNoPermission naming 'set' at its line", server, err)
		}
	}
	other := errors.New("ERR Error running script (call to f_50be): @user_script:1: oops")
	if err := namePermissionError(other, lua.MutexAcquire); errors.Is(err, ErrNoPermission) {
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
