package runtime

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/lua"
)

// ErrNoPermission: Redis refused a command for the ACL user the client
// logs in as (a NOPERM error reply), in a script or outside one. It is
// never retried: an acquire or release fails with it at once, a denied
// renewal ends the hold at once (the holder's context is cancelled with a
// cause wrapping ErrLockLost and ErrNoPermission, and EventLost carries it
// in Err), and a denied SUBSCRIBE fails the waiting acquire instead of
// leaving it to its retry timers. The error names the command; docs/acl.md
// lists the commands each deployment needs.
var ErrNoPermission = errors.New("lockgen: no permission")

// namePermissionError wraps err in ErrNoPermission, naming the command, if
// Redis denied one: a NOPERM reply to a command of the client, or the
// error a script gets for a command it may not run. That error is an ERR,
// not a NOPERM, and its words depend on the server (scriptDenials); every
// form names the script's line, which script maps back to its call. Any
// other error is returned as it is.
func namePermissionError(err error, script *lua.Script) error {
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
// key"), as Redis 7.2 and later presumably do (Valkey forked from 7.2.4). Matching only the first made a Valkey
// denial an ordinary error, retried until the wait or the lease ran out.
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

// permissionDenied reports whether err is a denial named by
// namePermissionError.
func permissionDenied(err error) bool {
	return errors.Is(err, ErrNoPermission)
}

// lostCause is the cause a renewal's end gives its holders: the NOPERM
// that refused it, or the lock being no longer held.
func lostCause(r *renewal) error {
	if r.denied != nil {
		return fmt.Errorf("%w: %s: renewal denied: %w", ErrLockLost, r.spec, r.denied)
	}
	return fmt.Errorf("%w: %s: renewal refused, the lock is no longer held", ErrLockLost, r.spec)
}

// permBackend names NOPERM errors (ErrNoPermission) on the way out of every
// Backend call, so that each part of the Locker can tell a denial from a
// transient failure.
type permBackend struct {
	backend.Backend
}

func withPermissionErrors(b backend.Backend) backend.Backend { return &permBackend{Backend: b} }

func (b *permBackend) Eval(ctx context.Context, c backend.Call) (any, error) {
	v, err := b.Backend.Eval(ctx, c)
	return v, namePermissionError(err, c.Script)
}

func (b *permBackend) EvalBatch(ctx context.Context, calls []backend.Call) []backend.Reply {
	replies := b.Backend.EvalBatch(ctx, calls)
	for i := range replies {
		replies[i].Err = namePermissionError(replies[i].Err, calls[i].Script)
	}
	return replies
}

func (b *permBackend) EvalWait(ctx context.Context, c backend.Call, replicas int, timeout time.Duration) (any, int, error) {
	v, acked, err := b.Backend.EvalWait(ctx, c, replicas, timeout)
	return v, acked, namePermissionError(err, c.Script)
}

func (b *permBackend) Subscribe(ctx context.Context, channel string, deliver func(string)) (func(), error) {
	unsub, err := b.Backend.Subscribe(ctx, channel, deliver)
	return unsub, namePermissionError(err, nil)
}
