package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/lockgen/lockgen/internal/callerr"
)

// replyError is an error reply as go-redis returns it: its message is the
// reply's text.
type replyError string

func (e replyError) Error() string { return string(e) }

func TestIsTransient(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	reset := &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	readTimeout := &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"connection refused", refused, true},
		{"connection reset", reset, true},
		{"broken pipe", syscall.EPIPE, true},
		{"EOF", io.EOF, true},
		{"EOF wrapped", fmt.Errorf("lockgen: acquire m: %w", io.EOF), true},
		{"read timeout of one call", readTimeout, true},
		{"READONLY", replyError("READONLY You can't write against a read only replica."), true},
		{"LOADING", replyError("LOADING Redis is loading the dataset in memory"), true},
		{"MASTERDOWN", replyError("MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."), true},
		{"NOREPLICAS", replyError("NOREPLICAS Not enough good replicas to write."), true},
		{"TRYAGAIN", replyError("TRYAGAIN Multiple keys request during rehashing of slot"), true},
		{"CLUSTERDOWN", replyError("CLUSTERDOWN The cluster is down"), true},
		{"MOVED", replyError("MOVED 3999 127.0.0.1:6381"), true},
		{"ASK", replyError("ASK 3999 127.0.0.1:6381"), true},
		{"reply wrapped and joined", errors.Join(errors.New("other"), fmt.Errorf("x: %w", replyError("READONLY no"))), true},
		{"script error", replyError("ERR Error running script (call to f_abc): bad"), false},
		{"NOPERM", replyError("NOPERM this user has no permissions to run the 'evalsha' command"), false},
		{"WRONGTYPE", replyError("WRONGTYPE Operation against a key holding the wrong kind of value"), false},
		{"word that only starts like one", replyError("ASKING is not a reply"), false},
		{"message that mentions one later", errors.New("lockgen: acquire m: READONLY"), false},
		{"wait ended", errNoReply, false},
		{"wait ended after a reset", errors.Join(errNoReply, reset), false},
		{"caller's context", context.Canceled, false},
		{"caller's deadline", context.DeadlineExceeded, false},
		{"not acquired", ErrNotAcquired, false},
		{"not replicated", ErrNotReplicated, false},
	}
	for _, tt := range tests {
		if got := callerr.IsTransient(tt.err); got != tt.want {
			t.Errorf("%s: callerr.IsTransient(%v) = %v, want %v", tt.name, tt.err, got, tt.want)
		}
	}
}
