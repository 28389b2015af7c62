package embedded

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/luashim"
	"github.com/lockgen/lockgen/runtime"
)

// Backend is a backend.Backend on an in-process luashim.Server.
type Backend struct {
	srv *luashim.Server
}

var _ backend.Backend = (*Backend)(nil)

// NewBackend returns a Backend on srv, or on a new server with the real
// clock if srv is nil.
func NewBackend(srv *luashim.Server) *Backend {
	if srv == nil {
		srv = luashim.New(luashim.RealClock{})
	}
	return &Backend{srv: srv}
}

// New returns a Locker on a new in-process server.
func New(opts ...runtime.Option) *runtime.Locker {
	return runtime.NewWithBackend(NewBackend(nil), opts...)
}

// Server returns the shim the scripts run on, for tests that want to look
// at the keys (Snapshot) or change them behind the Locker's back (Do).
func (b *Backend) Server() *luashim.Server { return b.srv }

// Eval runs c: EVALSHA, and after NOSCRIPT the script is loaded under its
// name (so that the shim's coverage report names it) and run again.
func (b *Backend) Eval(ctx context.Context, c backend.Call) (any, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	v, err := b.srv.EvalSha(c.Script.SHA1, c.Keys, c.Args...)
	if isNoScript(err) {
		if _, err := b.srv.Load(c.Script.Name, c.Script.Source); err != nil {
			return nil, err
		}
		v, err = b.srv.EvalSha(c.Script.SHA1, c.Keys, c.Args...)
	}
	return v, err
}

func isNoScript(err error) bool {
	var re *luashim.ReplyError
	return errors.As(err, &re) && strings.HasPrefix(re.Msg, "NOSCRIPT")
}

// EvalBatch runs the calls one after the other: in process there is no
// round trip to save.
func (b *Backend) EvalBatch(ctx context.Context, calls []backend.Call) []backend.Reply {
	out := make([]backend.Reply, len(calls))
	for i, c := range calls {
		v, err := b.Eval(ctx, c)
		out[i] = backend.Reply{Value: v, Err: err}
	}
	return out
}

// EvalWait runs c; the shim has no replicas, so none acknowledge.
func (b *Backend) EvalWait(ctx context.Context, c backend.Call, replicas int, timeout time.Duration) (any, int, error) {
	v, err := b.Eval(ctx, c)
	return v, 0, err
}

// Subscribe subscribes at once: the shim delivers messages in process.
func (b *Backend) Subscribe(ctx context.Context, channel string, deliver func(payload string)) (func(), error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return b.srv.Subscribe(channel, func(_, payload string) { deliver(payload) }), nil
}

// PublishCommand is PUBLISH: the shim is a single node.
func (b *Backend) PublishCommand() string { return "PUBLISH" }

// Close does nothing: the shim keeps working, so that locks still held can
// be released after the Locker is closed.
func (b *Backend) Close() error { return nil }

// Caps: none. A script call runs in process, bounded by nothing but the
// shim; the Locker bounds a call it may have to abandon on a goroutine of
// its own.
func (b *Backend) Caps() backend.Caps { return backend.Caps{} }
