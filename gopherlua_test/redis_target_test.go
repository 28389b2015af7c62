package gopherlua_test

import (
	"context"
	"errors"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockgen/lockgen/lua"
)

// redisTarget runs a scenario on a real redis-server in real time. Several
// redisTargets share one server; scenarios use distinct keys.
type redisTarget struct {
	tb  testing.TB
	rdb *redis.Client
	t0  time.Time

	// at is the current step's time; behind is how far the run fell behind
	// its schedule: the most by which a step was sent, or its keys read,
	// after the step's time (see lateness).
	at, behind time.Duration

	mu   sync.Mutex
	msgs map[string][]string
	subs []*redis.PubSub
}

func newRedisTarget(tb testing.TB, rdb *redis.Client, channels []string, sharded bool) *redisTarget {
	r := &redisTarget{tb: tb, rdb: rdb, msgs: map[string][]string{}}
	ctx := context.Background()
	for _, ch := range channels {
		subscribe := rdb.Subscribe
		if sharded {
			subscribe = rdb.SSubscribe
		}
		ps := subscribe(ctx, ch)
		// Receive the subscription confirmation so no message is missed.
		if _, err := ps.Receive(ctx); err != nil {
			tb.Fatalf("subscribe %s: %v", ch, err)
		}
		r.subs = append(r.subs, ps)
		go func(ch string, in <-chan *redis.Message) {
			for m := range in {
				r.mu.Lock()
				r.msgs[ch] = append(r.msgs[ch], m.Payload)
				r.mu.Unlock()
			}
		}(ch, ps.Channel())
	}
	r.t0 = time.Now()
	return r
}

func (r *redisTarget) name() string     { return "redis-server" }
func (r *redisTarget) start() time.Time { return r.t0 }

func (r *redisTarget) advanceTo(at time.Duration) {
	if d := time.Until(r.t0.Add(at)); d > 0 {
		time.Sleep(d)
	}
	r.at = at
	r.noteLateness()
}

// noteLateness records how far after the current step's time it is now.
func (r *redisTarget) noteLateness() {
	r.behind = max(r.behind, time.Since(r.t0.Add(r.at)))
}

// lateness is how far the run fell behind its schedule. The scenarios'
// expected TTLs assume each step runs at its time: a run that fell behind
// by more than about half the tolerance (a loaded machine descheduled it)
// can fail without any fault in the scripts.
func (r *redisTarget) lateness() time.Duration { return r.behind }

func (r *redisTarget) eval(s *lua.Script, keys []string, args []string) any {
	ctx := context.Background()
	ia := make([]any, len(args))
	for i, a := range args {
		ia[i] = a
	}
	v, err := r.rdb.EvalSha(ctx, s.SHA1, keys, ia...).Result()
	if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
		v, err = r.rdb.Eval(ctx, s.Source, keys, ia...).Result()
	}
	return normaliseRedis(v, err)
}

func (r *redisTarget) do(args ...string) any {
	ia := make([]any, len(args))
	for i, a := range args {
		ia[i] = a
	}
	v, err := r.rdb.Do(context.Background(), ia...).Result()
	return normaliseRedis(v, err)
}

func normaliseRedis(v any, err error) any {
	if errors.Is(err, redis.Nil) {
		return nil
	}
	if err != nil {
		return replyError(err.Error())
	}
	if x, ok := v.([]any); ok {
		return normaliseArray(x, normaliseRedis)
	}
	return v
}

func (r *redisTarget) snapshot(keys []string) []keyState {
	ctx := context.Background()
	var out []keyState
	for _, k := range keys {
		typ, err := r.rdb.Type(ctx, k).Result()
		if err != nil {
			r.tb.Fatalf("TYPE %s: %v", k, err)
		}
		if typ == "none" {
			continue
		}
		st := keyState{Key: k, Type: typ}
		asked := time.Since(r.t0)
		pttl, err := r.rdb.Do(ctx, "PTTL", k).Int64()
		if err != nil {
			r.tb.Fatalf("PTTL %s: %v", k, err)
		}
		if pttl == -2 {
			continue // expired between TYPE and PTTL
		}
		st.PTTL = pttl
		st.At = ((asked + time.Since(r.t0)) / 2).Milliseconds()
		switch typ {
		case "string":
			st.Value, err = r.rdb.Get(ctx, k).Result()
		case "hash":
			st.Hash, err = r.rdb.HGetAll(ctx, k).Result()
		case "zset":
			var zs []redis.Z
			zs, err = r.rdb.ZRangeWithScores(ctx, k, 0, -1).Result()
			for _, z := range zs {
				st.ZSet = append(st.ZSet, zmember{Member: z.Member.(string), Score: z.Score})
			}
		}
		if err != nil && !errors.Is(err, redis.Nil) {
			r.tb.Fatalf("read %s: %v", k, err)
		}
		if errors.Is(err, redis.Nil) {
			continue // expired between TYPE and read
		}
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	r.noteLateness()
	return out
}

func (r *redisTarget) messages(channel string, want int) []string {
	deadline := time.Now().Add(time.Second)
	for {
		r.mu.Lock()
		n := len(r.msgs[channel])
		r.mu.Unlock()
		if n >= want || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	// Give a message that should not exist a moment to show up.
	time.Sleep(20 * time.Millisecond)
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.msgs[channel]...)
}

func (r *redisTarget) close() {
	for _, ps := range r.subs {
		ps.Close()
	}
}
