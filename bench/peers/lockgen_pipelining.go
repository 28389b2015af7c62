//go:build !nolockgen

package peers

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/goredisbackend"
	goredislib "github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"

	"github.com/lockgen/lockgen/rueidisbackend"
	"github.com/lockgen/lockgen/runtime"
)

// lockgen on the two pipelining clients: the rueidis backend (module
// rueidisbackend), and go-redis's AutoPipeliner for the script calls.

func lockgenRueidisPeer(k lockgenKind) Peer {
	return Peer{
		Library: "lockgen", Setting: k.setting + "-rueidis",
		Notes:     "rueidisbackend.NewLocker on a rueidis client with default options (auto-pipelining); Kind " + k.kind.String(),
		AutoRenew: true,
		open: func(cfg Config) (Client, error) {
			calls, commands := &atomic.Int64{}, &atomic.Int64{}
			c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{cfg.Addr}})
			if err != nil {
				return nil, err
			}
			counted := countingRueidis{Client: c, calls: calls, commands: commands}
			return &lockgenClient{
				locker: rueidisbackend.NewLocker(counted), kind: k.kind, cfg: cfg,
				incr: func(ctx context.Context, key string) error {
					return counted.Do(ctx, counted.B().Incr().Key(key).Build()).Error()
				},
				counts: func() Counts { return Counts{Calls: calls.Load(), Commands: commands.Load()} },
				close:  func() error { c.Close(); return nil },
			}, nil
		},
	}
}

func lockgenAutoPipelinePeer(k lockgenKind) Peer {
	return Peer{
		Library: "lockgen", Setting: k.setting + "-autopipeline",
		Notes:     "runtime.NewWithBackend: the go-redis backend, with script calls (Eval) sent through go-redis's AutoPipeliner; Kind " + k.kind.String(),
		AutoRenew: true,
		open: func(cfg Config) (Client, error) {
			rdb, cc, ap, err := newAutoPipelinedClient(cfg.Addr)
			if err != nil {
				return nil, err
			}
			b := autoPipelineBackend{Backend: goredisbackend.New(rdb), ap: ap}
			return &lockgenClient{
				locker: runtime.NewWithBackend(b), kind: k.kind, cfg: cfg,
				incr:   func(ctx context.Context, key string) error { return ap.Incr(ctx, key).Err() },
				counts: cc.counts,
				close:  func() error { ap.Close(); return rdb.Close() },
			}, nil
		},
	}
}

// autoPipelineBackend is the go-redis backend with Eval, the call of every
// acquire and release, sent through an AutoPipeliner. Batches, WAIT and
// subscriptions stay on the plain client. It exists to measure go-redis's
// AutoPipeline, not to ship: a queued command there no longer honours its
// context, which the runtime's bounds rely on.
type autoPipelineBackend struct {
	backend.Backend
	ap *goredislib.AutoPipeliner
}

func (b autoPipelineBackend) Eval(ctx context.Context, c backend.Call) (any, error) {
	args := make([]any, len(c.Args))
	for i, a := range c.Args {
		args[i] = a
	}
	v, err := b.ap.EvalSha(ctx, c.Script.SHA1, c.Keys, args...).Result()
	if err != nil && goredislib.HasErrorPrefix(err, "NOSCRIPT") {
		v, err = b.ap.Eval(ctx, c.Script.Source, c.Keys, args...).Result()
	}
	if errors.Is(err, goredislib.Nil) {
		return nil, nil
	}
	return v, err
}
