package rueidisbackend

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/redis/rueidis"

	"github.com/lockgen/lockgen/runtime"
)

// NewLocker returns a runtime.Locker whose scripts and wake-ups run on
// client. Closing the Locker ends its subscriptions; the client stays open
// and belongs to the caller.
//
// rueidis returns from a call when its context's deadline passes, and the
// Backend says so (Caps.HonorsDeadline): the Locker runs each script call
// on the caller's goroutine rather than on one of its own, and lets
// concurrent calls share round trips. NewLocker is
// runtime.NewWithBackend(New(client), opts...).
func NewLocker(client rueidis.Client, opts ...runtime.Option) *runtime.Locker {
	return runtime.NewWithBackend(New(client), opts...)
}

// New returns a backend.Backend over client, for runtime.NewWithBackend.
func New(client rueidis.Client) *Backend {
	return &Backend{
		client:  client,
		cluster: client.Mode() == rueidis.ClientModeCluster,
		subs:    map[*subscription]struct{}{},
		done:    make(chan struct{}),
	}
}

// Backend is a backend.Backend over a rueidis client.
type Backend struct {
	client  rueidis.Client
	cluster bool // wake channels are shard channels

	mu     sync.Mutex
	subs   map[*subscription]struct{} // live subscriptions, for Close
	closed bool
	done   chan struct{} // closed by Close: the server watch ends
}

var _ backend.Backend = (*Backend)(nil)

// PublishCommand is SPUBLISH on a Cluster, where SSUBSCRIBE reaches only the
// node of the channel's slot, and PUBLISH elsewhere.
func (b *Backend) PublishCommand() string {
	if b.cluster {
		return "SPUBLISH"
	}
	return "PUBLISH"
}

func (b *Backend) evalSHA(c backend.Call) rueidis.Completed {
	return b.client.B().Evalsha().Sha1(c.Script.SHA1).Numkeys(int64(len(c.Keys))).Key(c.Keys...).Arg(c.Args...).Build()
}

func (b *Backend) evalSource(c backend.Call) rueidis.Completed {
	return b.client.B().Eval().Script(c.Script.Source).Numkeys(int64(len(c.Keys))).Key(c.Keys...).Arg(c.Args...).Build()
}

// isNoScript: the server does not have the script cached (a restart, a
// failover, SCRIPT FLUSH); EVAL with the source loads it.
func isNoScript(err error) bool {
	re, ok := rueidis.IsRedisErr(err)
	return ok && re.IsNoScript()
}

func (b *Backend) Eval(ctx context.Context, c backend.Call) (any, error) {
	v, err := reply(b.client.Do(ctx, b.evalSHA(c)))
	if isNoScript(err) {
		v, err = reply(b.client.Do(ctx, b.evalSource(c)))
	}
	return v, err
}

// EvalBatch sends every call in one DoMulti, which rueidis splits per node
// on a Cluster, then the calls that met NOSCRIPT once more as EVAL.
func (b *Backend) EvalBatch(ctx context.Context, calls []backend.Call) []backend.Reply {
	out := make([]backend.Reply, len(calls))
	if len(calls) == 0 {
		return out
	}
	cmds := make(rueidis.Commands, len(calls))
	for i, c := range calls {
		cmds[i] = b.evalSHA(c)
	}
	var retry []int
	for i, r := range b.client.DoMulti(ctx, cmds...) {
		v, err := reply(r)
		if isNoScript(err) {
			retry = append(retry, i)
			continue
		}
		out[i] = backend.Reply{Value: v, Err: err}
	}
	if len(retry) == 0 {
		return out
	}
	cmds = cmds[:0]
	for _, i := range retry {
		cmds = append(cmds, b.evalSource(calls[i]))
	}
	for j, r := range b.client.DoMulti(ctx, cmds...) {
		v, err := reply(r)
		out[retry[j]] = backend.Reply{Value: v, Err: err}
	}
	return out
}

// EvalWait runs c and WAIT on one dedicated connection to the node of c's
// keys, so that WAIT counts the replicas that have c's writes. A dedicated
// connection also keeps WAIT, which blocks its connection, off the shared
// pipelines other goroutines use.
func (b *Backend) EvalWait(ctx context.Context, c backend.Call, replicas int, timeout time.Duration) (any, int, error) {
	ms := max(timeout.Milliseconds(), 1) // WAIT 0 would block forever
	run := func(eval func(backend.Call) rueidis.Completed) (v any, acked int, err error) {
		derr := b.client.Dedicated(func(dc rueidis.DedicatedClient) error {
			rs := dc.DoMulti(ctx, eval(c), dc.B().Wait().Numreplicas(int64(replicas)).Timeout(ms).Build())
			if v, err = reply(rs[0]); err != nil {
				return nil
			}
			n, werr := rs[1].AsInt64()
			acked, err = int(n), werr
			return nil
		})
		if derr != nil {
			return nil, 0, derr
		}
		return v, acked, err
	}
	v, n, err := run(b.evalSHA)
	if isNoScript(err) {
		v, n, err = run(b.evalSource)
	}
	return v, n, err
}

// reply turns a rueidis result into what backend.Backend promises: int64,
// string, []any of those, or nil; a nil reply is nil, not an error.
func reply(r rueidis.RedisResult) (any, error) {
	if err := r.Error(); err != nil {
		if rueidis.IsRedisNil(err) {
			return nil, nil
		}
		return nil, err
	}
	m, err := r.ToMessage()
	if err != nil {
		return nil, err
	}
	return value(m)
}

// value converts one reply, recursively. Over RESP3 a script's Lua true
// arrives as a boolean and false as a null: they become 1 and nil, which is
// what a RESP2 client (go-redis) sees.
func value(m rueidis.RedisMessage) (any, error) {
	switch {
	case m.IsNil():
		return nil, nil
	case m.IsInt64():
		return m.AsInt64()
	case m.IsString():
		return m.ToString()
	case m.IsBool():
		if t, _ := m.AsBool(); t {
			return int64(1), nil
		}
		return nil, nil
	case m.IsArray():
		elems, err := m.ToArray()
		if err != nil {
			return nil, err
		}
		out := make([]any, len(elems))
		for i, e := range elems {
			if err := e.Error(); err != nil && !rueidis.IsRedisNil(err) {
				out[i] = err // an error inside a table, as go-redis keeps it
				continue
			}
			if out[i], err = value(e); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	if err := m.Error(); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("rueidisbackend: unexpected reply %s", m.String())
}

// Close ends every subscription and waits until none can deliver any more.
// It does not close the client.
func (b *Backend) Close() error {
	b.mu.Lock()
	if !b.closed {
		close(b.done)
	}
	b.closed = true
	subs := b.subs
	b.subs = map[*subscription]struct{}{}
	b.mu.Unlock()
	for s := range subs {
		s.stop()
	}
	return nil
}

// errClosed is returned by a Subscribe after Close.
var errClosed = fmt.Errorf("rueidisbackend: %w", runtime.ErrClosed)
