package callerr

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/lockgen/lockgen/lua"
)

// ErrNoPermission is runtime.ErrNoPermission: Redis refused a command for
// the ACL user the client logs in as. It is never retried.
var ErrNoPermission = errors.New("lockgen: no permission")

// NamePermissionError wraps err in ErrNoPermission, naming the command, if
// Redis denied one: a NOPERM reply to a command of the client, or the
// error a script gets for a command it may not run. That error is an ERR,
// not a NOPERM, and its words depend on the server (scriptDenials); every
// form names the script's line, which script maps back to its call. Any
// other error is returned as it is.
func NamePermissionError(err error, script *lua.Script) error {
	if err == nil || errors.Is(err, ErrNoPermission) {
		return err
	}
	msg := err.Error()
	if at := strings.Index(msg, "NOPERM"); at >= 0 {
		return fmt.Errorf("%w (%s): %w", ErrNoPermission, deniedCommand(msg[at:]), err)
	}
	if !isScriptDenial(msg) {
		return err
	}
	what := "a command"
	if m := scriptLine.FindStringSubmatch(msg); m != nil && script != nil {
		line, _ := strconv.Atoi(m[1])
		what = scriptCall(script, line)
	}
	return fmt.Errorf("%w (%s): %w", ErrNoPermission, what, err)
}

// scriptDenials are the ways a server words a script's ACL denial:
// Redis 7.0 says "The user executing the script can't run this command or
// subcommand"; Valkey 8 says "ACL failure in script: User u has no
// permissions to run the 'set' command" (or "No permissions to access a
// key"), as Redis 7.2 and later presumably do (Valkey forked from 7.2.4).
// Matching only the first made a Valkey denial an ordinary error, retried
// until the wait or the lease ran out.
var scriptDenials = []string{"The user executing the script can't", "ACL failure in script:"}

func isScriptDenial(msg string) bool {
	for _, words := range scriptDenials {
		if strings.Contains(msg, words) {
			return true
		}
	}
	return false
}

// scriptLine finds the line of a script in Redis's error message.
var scriptLine = regexp.MustCompile(`@user_script:(\d+)`)

// redisCall finds the command a line of a script calls.
var redisCall = regexp.MustCompile(`redis\.call\('([A-Z]+)'|redis\.call\((pub)\b`)

// deniedCommand reads the command from a NOPERM message: "NOPERM User u
// has no permissions to run the 'zpopmin' command", or a key or channel
// outside the user's patterns.
func deniedCommand(msg string) string {
	if _, rest, ok := strings.Cut(msg, "'"); ok {
		if name, _, ok := strings.Cut(rest, "'"); ok {
			return "'" + name + "'"
		}
	}
	if strings.Contains(msg, "channel") {
		return "a channel"
	}
	return "a key"
}

// scriptCall names the command at line of script's Source and where it is.
func scriptCall(script *lua.Script, line int) string {
	lines := strings.Split(script.Source, "\n")
	file, fileLine := script.File(line)
	where := fmt.Sprintf("%s:%d", file, fileLine)
	if line < 1 || line > len(lines) {
		return "a command at " + where
	}
	m := redisCall.FindStringSubmatch(lines[line-1])
	switch {
	case m == nil:
		return "a command at " + where
	case m[2] != "":
		return "'publish' or 'spublish' at " + where
	}
	return "'" + strings.ToLower(m[1]) + "' at " + where
}
